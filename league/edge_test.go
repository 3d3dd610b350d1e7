package league

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// TestEdgeMapsEveryRefusal checks the edge's one table: every kind refusals.go declares
// has a reason, each refusal becomes its wire error with message, details and
// violations, and an error the table does not map stays a plain error, which the
// server answers INTERNAL.
func TestEdgeMapsEveryRefusal(t *testing.T) {
	declared := refusalKinds(t)
	mapped := tableKeys(t)
	slices.Sort(declared)
	slices.Sort(mapped)
	if !slices.Equal(declared, mapped) {
		t.Errorf("kinds declared in refusals.go %v, mapped in edge.go %v; want the same", declared, mapped)
	}

	for kind, reason := range reasons {
		r := refuse(kind, "no %s", "way")
		r.details, r.violations = "why", []string{"where"}
		err := wireError(fmt.Errorf("wrapped: %w", r))
		if !errors.Is(r, kind) || r.Error() != "no way" {
			t.Errorf("refusal %q: Is(%v) false or message changed", r, kind)
		}
		var pe *protocol.Error
		if !errors.As(err, &pe) {
			t.Fatalf("kind %v: got %T, want a wire error", kind, err)
		}
		if pe.Code != reason.Code() || pe.Message != "no way" || pe.Data.Reason != reason ||
			pe.Data.Details != "why" || !slices.Equal(pe.Data.Violations, []string{"where"}) {
			t.Errorf("kind %v: got %+v with data %+v, want %d %s, the message, details and violations", kind, pe, pe.Data, reason.Code(), reason)
		}
	}

	for _, err := range []error{errors.New("disk on fire"), refuse(errors.New("unmapped"), "secret")} {
		var pe *protocol.Error
		if errors.As(wireError(err), &pe) {
			t.Errorf("%v became wire error %v, want INTERNAL from the server", err, pe)
		}
	}
}

// refusalKinds names the package-level errors.New values of refusals.go.
func refusalKinds(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "refusals.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, v := range vs.Values {
				if c, ok := v.(*ast.CallExpr); ok && isErrorsNew(c.Fun) {
					names = append(names, vs.Names[i].Name)
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("refusals.go declares no kinds")
	}
	return names
}

func isErrorsNew(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "errors" && sel.Sel.Name == "New"
}

// tableKeys names the keys of the reasons table in edge.go.
func tableKeys(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "edge.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "reasons" {
			return true
		}
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			keys = append(keys, el.(*ast.KeyValueExpr).Key.(*ast.Ident).Name)
		}
		return false
	})
	if len(keys) != len(reasons) {
		t.Fatalf("edge.go lists %d keys, the table holds %d", len(keys), len(reasons))
	}
	return keys
}

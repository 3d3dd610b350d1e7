// Package doccheck holds the test that every relative link and anchor in the project's
// Markdown (README.md, docs/, protocol/README.md, examples/) resolves.
package doccheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// skipDirs are not documentation: build output, data, logs and artifacts.
var skipDirs = []string{".git", "bin", "data", "logs", "test-artifacts", ".ci-out", "node_modules", "testdata"}

func TestDocLinksResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	problems, files, err := checkTree(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", "protocol/README.md", "docs/map.md"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s was not checked", want)
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d Markdown files checked", len(files))
}

// The checker itself: a tree with one good and three broken links must show exactly
// the broken ones.
func TestCheckerFindsBrokenLinks(t *testing.T) {
	tree := map[string]string{
		"README.md": "# Agent League\n\n## Two commands\n\nSee [running](docs/running.md#by-hand), [layout](#two-commands), " +
			"[gone](docs/missing.md), [no anchor](docs/running.md#on-many-hosts), [self](#nowhere) and `[code](not/a/link.md)`.\n\n" +
			"```\n[in a block](also/not/a/link.md)\n```\n\n![shot](docs/live-view.png)\n",
		"docs/running.md":    "# Running\n\n## By hand\n\nBack to [the top](../README.md).\n",
		"docs/live-view.png": "png",
	}
	dir := t.TempDir()
	for name, body := range tree {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	problems, _, err := checkTree(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md: link docs/missing.md: no such file",
		"README.md: link docs/running.md#on-many-hosts: docs/running.md has no heading with anchor on-many-hosts",
		"README.md: link #nowhere: README.md has no heading with anchor nowhere",
	}
	slices.Sort(want)
	slices.Sort(problems)
	if !slices.Equal(problems, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlugIsGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"Certify an agent: league conform":   "certify-an-agent-league-conform",
		"Language models (strategy llm)":     "language-models-strategy-llm",
		"`league bench`: measuring a league": "league-bench-measuring-a-league",
		"match_credentials and tokens":       "match_credentials-and-tokens",
		"I want to …":                        "i-want-to-",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// checkTree checks every Markdown file under fsys and returns one line per broken link,
// and the files it checked.
func checkTree(fsys fs.FS) (problems, files []string, err error) {
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && slices.Contains(skipDirs, d.Name()) {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	anchors := map[string][]string{}
	anchorsOf := func(file string) ([]string, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		_, a := parse(src)
		anchors[file] = a
		return a, nil
	}
	for _, file := range files {
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, nil, err
		}
		links, _ := parse(src)
		for _, link := range links {
			if p := checkLink(fsys, file, link, anchorsOf); p != "" {
				problems = append(problems, fmt.Sprintf("%s: link %s: %s", file, link, p))
			}
		}
	}
	return problems, files, nil
}

// checkLink returns what is wrong with link in file, or "" when it resolves. Links with a
// scheme (https:, mailto:) are not followed.
func checkLink(fsys fs.FS, file, link string, anchorsOf func(string) ([]string, error)) string {
	u, err := url.Parse(link)
	if err != nil {
		return "not a URL: " + err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		return ""
	}
	target := file
	if u.Path != "" {
		target = path.Clean(path.Join(path.Dir(file), u.Path))
		if strings.HasPrefix(target, "../") {
			return "points outside the repository"
		}
		if _, err := fs.Stat(fsys, target); err != nil {
			return "no such file"
		}
	}
	if u.Fragment == "" || !strings.HasSuffix(target, ".md") {
		return ""
	}
	a, err := anchorsOf(target)
	if err != nil {
		return err.Error()
	}
	if !slices.Contains(a, u.Fragment) {
		return fmt.Sprintf("%s has no heading with anchor %s", target, u.Fragment)
	}
	return ""
}

// parse returns the link and image destinations of a Markdown document (code spans and
// blocks are not links) and the anchors GitHub gives its headings.
func parse(src []byte) (links, anchors []string) {
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	seen := map[string]int{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			links = append(links, string(n.Destination))
		case *ast.Image:
			links = append(links, string(n.Destination))
		case *ast.Heading:
			s := slug(plain(n, src))
			if k := seen[s]; k > 0 {
				anchors = append(anchors, fmt.Sprintf("%s-%d", s, k))
			} else {
				anchors = append(anchors, s)
			}
			seen[s]++
		}
		return ast.WalkContinue, nil
	})
	return links, anchors
}

// plain is the text of n as GitHub reads it for an anchor: its words and code spans.
func plain(n ast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		default:
			b.WriteString(plain(c, src))
		}
	}
	return b.String()
}

// slug is GitHub's anchor of a heading: lower case, letters, digits, '-' and '_' kept,
// spaces made '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

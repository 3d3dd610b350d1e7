package config

import (
	"reflect"
	"testing"
)

// TestScalarKindsCoverConfigTypes guards the decoder: every field of the files' root
// types must be a struct, a map, or a scalar kind it knows, or a slice of or pointer to
// one of those.
func TestScalarKindsCoverConfigTypes(t *testing.T) {
	var check func(t *testing.T, typ reflect.Type, path string)
	check = func(t *testing.T, typ reflect.Type, path string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() || f.Tag.Get("yaml") == "-" {
				continue
			}
			p := path + "." + f.Name
			ft := f.Type
			if ft.Kind() == reflect.Slice || ft.Kind() == reflect.Pointer {
				ft, p = ft.Elem(), p+"[]"
			}
			switch {
			case ft.Kind() == reflect.Struct:
				check(t, ft, p)
			case ft.Kind() == reflect.Map:
			default:
				if _, ok := scalarKinds[ft.Kind()]; !ok {
					t.Errorf("%s has kind %s, which the decoder does not handle", p, ft.Kind())
				}
			}
		}
	}
	for _, root := range []any{Config{}, registryFile{}, policyFile{}} {
		typ := reflect.TypeOf(root)
		t.Run(typ.Name(), func(t *testing.T) { check(t, typ, typ.Name()) })
	}
}

package config

import (
	"reflect"
	"testing"
)

// TestScalarKindsCoverConfigTypes guards the decoder: every field of the files' root
// types must be a struct, a slice of structs, a map, or a scalar kind it knows.
func TestScalarKindsCoverConfigTypes(t *testing.T) {
	var check func(t *testing.T, typ reflect.Type, path string)
	check = func(t *testing.T, typ reflect.Type, path string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() || f.Tag.Get("yaml") == "-" {
				continue
			}
			p := path + "." + f.Name
			switch ft := f.Type; {
			case ft.Kind() == reflect.Struct:
				check(t, ft, p)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				check(t, ft.Elem(), p+"[]")
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

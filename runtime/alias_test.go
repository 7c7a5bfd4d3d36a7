package runtime

import (
	"errors"
	"reflect"
	"testing"
)

// bufferPaths lists the dotted paths of every *Buffer field of struct type t
// (nested structs followed), as collectBuffers names them.
func bufferPaths(prefix string, t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case !f.IsExported():
		case f.Type == bufferType:
			out = append(out, prefix+f.Name)
		case f.Type.Kind() == reflect.Struct:
			out = append(out, bufferPaths(prefix+f.Name+".", f.Type)...)
		}
	}
	return out
}

// TestCheckAliasTable: for every built-in op and every pair (output, other
// buffer field) of its argument struct, found by reflection so that a field
// added later is covered, sharing one buffer is ErrAlias naming the output,
// except the op's in-place pairs; all-distinct buffers pass.
func TestCheckAliasTable(t *testing.T) {
	for op, rule := range argRules {
		ar, ok := aliasRules[op]
		if !ok {
			t.Errorf("%s: no aliasing rule", op)
			continue
		}
		paths := bufferPaths("", rule.typ.Elem())
		for _, out := range ar.outputs {
			found := false
			for _, p := range paths {
				found = found || p == out
			}
			if !found {
				t.Errorf("%s: output %s is not a buffer field of %v", op, out, rule.typ)
			}
		}
		fresh := func() reflect.Value {
			v := reflect.New(rule.typ.Elem())
			for _, p := range paths {
				fieldByPath(v.Elem(), p).Set(reflect.ValueOf(&Buffer{}))
			}
			return v
		}
		if err := CheckAlias(op, fresh().Interface()); err != nil {
			t.Errorf("%s: distinct buffers: %v", op, err)
		}
		for _, out := range ar.outputs {
			for _, other := range paths {
				if other == out {
					continue
				}
				v := fresh()
				fieldByPath(v.Elem(), other).Set(fieldByPath(v.Elem(), out))
				err := CheckAlias(op, v.Interface())
				inPlace := false
				for _, p := range ar.inPlace {
					inPlace = inPlace || p == [2]string{out, other} || p == [2]string{other, out}
				}
				switch {
				case inPlace && err != nil:
					t.Errorf("%s: %s = %s is an allowed in-place pair: %v", op, out, other, err)
				case !inPlace && !errors.Is(err, ErrAlias):
					t.Errorf("%s: output %s sharing a buffer with %s: %v; want ErrAlias", op, out, other, err)
				}
			}
		}
	}
}

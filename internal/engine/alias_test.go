package engine

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// builtinArgs is one value of every built-in argument struct.
var builtinArgs = []Args{
	&MatMulArgs{}, &AttentionArgs{}, &KVAppendArgs{}, &GatherArgs{}, &ScatterArgs{}, &GatherCASArgs{},
	&QuantizeArgs{}, &DequantizeArgs{}, &AmaxArgs{}, &ActArgs{}, &EltArgs{}, &NormArgs{},
	&PoolArgs{}, &L2NormArgs{}, &SoftmaxArgs{}, &RoPEArgs{}, &SampleArgs{},
}

var bufferType = reflect.TypeFor[*Buffer]()

// bufferPaths lists the dotted paths of every *Buffer field of struct type
// t, nested structs and pointers to them followed ("B.Buf" for a *Matrix
// B), as the Operands methods name them.
func bufferPaths(prefix string, t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			ft = ft.Elem()
		}
		switch {
		case !f.IsExported():
		case f.Type == bufferType:
			out = append(out, prefix+f.Name)
		case ft.Kind() == reflect.Struct && ft.PkgPath() == bufferType.Elem().PkgPath():
			out = append(out, bufferPaths(prefix+f.Name+".", ft)...)
		}
	}
	return out
}

// fieldByPath follows a dotted path of field names through pointers.
func fieldByPath(v reflect.Value, path string) reflect.Value {
	for _, name := range strings.Split(path, ".") {
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		v = v.FieldByName(name)
	}
	return v
}

// TestOperandsListEveryBuffer: every built-in argument struct's Operands
// names each of its *Buffer fields (found by reflection, so that a field
// added later is covered) exactly once, and lists nothing else.
func TestOperandsListEveryBuffer(t *testing.T) {
	for _, a := range builtinArgs {
		paths := bufferPaths("", reflect.TypeOf(a).Elem())
		ops := a.Operands()
		var names []string
		for _, o := range ops.All() {
			names = append(names, o.Name)
		}
		slices.Sort(paths)
		slices.Sort(names)
		if !slices.Equal(paths, names) {
			t.Errorf("%T: Operands names %v; the buffer fields are %v", a, names, paths)
		}
	}
	var nilArgs *MatMulArgs
	if ops := nilArgs.Operands(); len(ops.All()) != 0 {
		t.Errorf("a nil *MatMulArgs lists %v", ops.All())
	}
}

// fullArgs returns a new value of a's type with every buffer field a fresh
// 16-element buffer viewed whole (matrices 4×4, one of them a batch), the
// optional views set, and the top-level int fields 1.
func fullArgs(t *testing.T, rt *Runtime, a Args) reflect.Value {
	v := reflect.New(reflect.TypeOf(a).Elem())
	buf := func() *Buffer {
		b, err := rt.Alloc(tile.F32, 16)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i := range v.Elem().NumField() {
		f := v.Elem().Field(i)
		switch f.Interface().(type) {
		case *Buffer:
			f.Set(reflect.ValueOf(buf()))
		case Matrix:
			f.Set(reflect.ValueOf(Matrix{Buf: buf(), Rows: 4, Cols: 4, LD: 4, BatchStride: 16}))
		case *Matrix:
			f.Set(reflect.ValueOf(&Matrix{Buf: buf(), Rows: 4, Cols: 4, LD: 4, BatchStride: 16}))
		case AttnView:
			f.Set(reflect.ValueOf(AttnView{Buf: buf(), Batch: 1, Seq: 4, Heads: 1, HeadDim: 4}))
		case Tile:
			f.Set(reflect.ValueOf(Tile{Buf: buf()}))
		case int:
			f.SetInt(1)
		}
	}
	return v
}

// TestCheckAliasTable: for every built-in op and every pair (output, other
// buffer operand) of its argument struct, sharing one buffer, both viewed
// whole, is ErrAlias naming the output, except where the other operand is
// an input the output may update in place (matmul's C = D, a light op's
// y = x); all-distinct buffers pass.
func TestCheckAliasTable(t *testing.T) {
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for _, a := range builtinArgs {
		if err := CheckAlias("test", fullArgs(t, rt, a).Interface()); err != nil {
			t.Errorf("%T: distinct buffers: %v", a, err)
		}
		ops := a.Operands()
		for _, out := range ops.All() {
			if !out.Written {
				continue
			}
			for _, other := range ops.All() {
				if other.Name == out.Name {
					continue
				}
				v := fullArgs(t, rt, a)
				fieldByPath(v, other.Name).Set(fieldByPath(v, out.Name))
				err := CheckAlias("test", v.Interface())
				switch {
				case other.InPlace && err != nil:
					t.Errorf("%T: %s = %s is an allowed in-place pair: %v", a, out.Name, other.Name, err)
				case !other.InPlace && !errors.Is(err, ErrAlias):
					t.Errorf("%T: output %s sharing a buffer with %s: %v; want ErrAlias", a, out.Name, other.Name, err)
				case err != nil && !strings.Contains(err.Error(), out.Name) && !strings.Contains(err.Error(), other.Name):
					t.Errorf("%T: %s = %s: %v names neither", a, out.Name, other.Name, err)
				}
			}
		}
	}
}

// TestOperandOverlaps: the byte-span rule on views of one buffer.
func TestOperandOverlaps(t *testing.T) {
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	b, err := rt.Alloc(tile.F32, 12, 12)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rt.Alloc(tile.F32, 12, 12)
	if err != nil {
		t.Fatal(err)
	}
	m := func(off, rows, cols int) Operand {
		return MatrixOperand("m", Matrix{Buf: b, Offset: off, Rows: rows, Cols: cols, LD: 12}, 1)
	}
	for _, c := range []struct {
		name string
		a, b Operand
		want bool
	}{
		{"same view", m(0, 4, 4), m(0, 4, 4), true},
		{"other buffer", m(0, 4, 4), MatrixOperand("o", Matrix{Buf: other, Rows: 4, Cols: 4, LD: 12}, 1), false},
		{"rows after", m(0, 4, 12), m(48, 4, 12), false},
		{"one row shared", m(0, 4, 12), m(36, 4, 12), true},
		{"q and k columns of one row", m(0, 7, 8), m(8, 7, 4), false},
		{"columns overlap by one", m(0, 7, 8), m(7, 7, 4), true},
		{"empty view", m(0, 0, 4), m(0, 4, 4), false},
		{"different strides", m(0, 4, 4), MatrixOperand("m", Matrix{Buf: b, Offset: 4, Rows: 2, Cols: 4, LD: 6}, 1), true},
		{"a whole buffer", Operand{Buf: b, End: b.Bytes()}, m(140, 1, 4), true},
	} {
		if got := c.a.Overlaps(c.b); got != c.want {
			t.Errorf("%s: Overlaps %v; want %v", c.name, got, c.want)
		}
		if got := c.b.Overlaps(c.a); got != c.want {
			t.Errorf("%s (swapped): Overlaps %v; want %v", c.name, got, c.want)
		}
	}
}

package runtime

import (
	"reflect"
	"strings"

	"github.com/tcrt-go/tcrt/tile"
)

// argRule is what CheckArgs knows about one op's argument struct.
type argRule struct {
	typ      reflect.Type                  // the pointer type Launch.Args must have
	required []string                      // field paths of *Buffer fields that must be set
	positive []string                      // int fields that must be positive
	check    func(a any, r *Runtime) error // op-specific rules, after the above; may be nil
}

// aliasRule is what CheckAlias knows about one op: the field paths of its
// output buffers, and the pairs of fields allowed to share a buffer
// (an in-place update the op checks itself, such as matmul's C = D).
type aliasRule struct {
	outputs []string
	inPlace [][2]string
}

// aliasRules lists every built-in op's outputs. An output may share its
// buffer with no other argument, input or output, scale, amax and index
// buffers included: kernels read inputs while writing outputs, and two
// outputs in one buffer have no defined result.
var aliasRules = map[string]aliasRule{
	OpMatMul:     {outputs: []string{"D.Buf"}, inPlace: [][2]string{{"D.Buf", "C.Buf"}}},
	OpAttention:  {outputs: []string{"O.Buf", "LSE"}},
	OpKVAppend:   {outputs: []string{"K.Buf", "V.Buf"}},
	OpGather:     {outputs: []string{"Dst.Buf"}},
	OpScatter:    {outputs: []string{"Mem"}},
	OpGatherCAS:  {outputs: []string{"Mem", "Dst.Buf"}},
	OpQuantize:   {outputs: []string{"Q", "ScaleInv", "Amax"}},
	OpDequantize: {outputs: []string{"Y"}},
	OpAmax:       {outputs: []string{"Out"}},
}

// CheckAlias returns an error wrapping ErrAlias, naming the output, if an
// output buffer of a built-in op's argument struct (aliasRules) is also
// another of its buffer fields, outside the op's allowed in-place pairs.
// Buffers are distinct allocations, so sharing is identity. Ops not listed
// pass. The ops package calls it at the end of every Plan, and CheckArgs
// for every launch.
func CheckAlias(op string, args any) error {
	rule, ok := aliasRules[op]
	if !ok {
		return nil
	}
	v := reflect.ValueOf(args)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil // CheckArgs reports the type
	}
	var fields []namedBuffer
	collectBuffers("", v.Elem(), &fields)
	allowed := func(a, b string) bool {
		for _, p := range rule.inPlace {
			if p[0] == a && p[1] == b || p[0] == b && p[1] == a {
				return true
			}
		}
		return false
	}
	for _, out := range rule.outputs {
		ob := fieldBuffer(fields, out)
		if ob == nil {
			continue
		}
		for _, f := range fields {
			if f.path != out && f.buf == ob && !allowed(out, f.path) {
				return tile.Errorf(ErrAlias, op, out, "the output shares its buffer with %s", f.path)
			}
		}
	}
	return nil
}

type namedBuffer struct {
	path string
	buf  *Buffer
}

// collectBuffers appends every non-nil *Buffer field of struct v (nested
// structs followed, paths dotted).
func collectBuffers(prefix string, v reflect.Value, out *[]namedBuffer) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		switch fv := v.Field(i); {
		case f.Type == bufferType:
			if b := fv.Interface().(*Buffer); b != nil {
				*out = append(*out, namedBuffer{prefix + f.Name, b})
			}
		case f.Type.Kind() == reflect.Struct:
			collectBuffers(prefix+f.Name+".", fv, out)
		}
	}
}

func fieldBuffer(fs []namedBuffer, path string) *Buffer {
	for _, f := range fs {
		if f.path == path {
			return f.buf
		}
	}
	return nil
}

// argRules describes the argument structs of the built-in ops. Ops not
// listed (registered by others) are not checked.
var argRules = map[string]argRule{
	OpMatMul: {reflect.TypeFor[*MatMulArgs](), []string{"A.Buf", "B.Buf", "D.Buf"},
		[]string{"M", "N", "K", "Batch"}, checkMatMulArgs},
	OpAttention: {reflect.TypeFor[*AttentionArgs](), []string{"Q.Buf", "K.Buf", "V.Buf", "O.Buf"},
		[]string{"Batch", "HeadsQ", "HeadsKV", "HeadDim"}, nil}, // SeqQ is 0 with CuSeqQ
	OpKVAppend: {reflect.TypeFor[*KVAppendArgs](), []string{"NewK.Buf", "NewV.Buf", "K.Buf", "V.Buf"},
		[]string{"Batch", "HeadsKV", "HeadDim"}, nil},
	OpGather:    {reflect.TypeFor[*GatherArgs](), []string{"Mem", "Idx.Buf", "Dst.Buf"}, nil, nil},
	OpScatter:   {reflect.TypeFor[*ScatterArgs](), []string{"Mem", "Idx.Buf", "Src.Buf"}, nil, nil},
	OpGatherCAS: {reflect.TypeFor[*GatherCASArgs](), []string{"Mem", "Idx.Buf", "Expected.Buf", "Replacement.Buf", "Dst.Buf"}, nil, nil},
	OpQuantize:  {reflect.TypeFor[*QuantizeArgs](), []string{"X", "Q"}, []string{"Rows", "Cols"}, nil},
	OpDequantize: {reflect.TypeFor[*DequantizeArgs](), []string{"Q", "Y"},
		[]string{"Rows", "Cols"}, nil},
	OpAmax: {reflect.TypeFor[*AmaxArgs](), []string{"X", "Out"}, []string{"Rows", "Cols"}, nil},
}

// CheckArgs checks the argument struct of a call of a built-in op before a
// kernel sees it: the right type and not nil, the required buffers set,
// every buffer open and r's, the shape fields positive, for matmul every
// view within its buffer, and no output sharing a buffer with another
// argument (CheckAlias). It returns an error wrapping ErrArgument (or
// ErrClosed, ErrShape, ErrBounds, ErrAlias) naming the field. The ops package builds
// valid structs; this guards direct callers of Run, Select and LaunchKernel.
func (r *Runtime) CheckArgs(op string, args any) error {
	if err := r.checkOpen(op); err != nil {
		return err
	}
	rule, ok := argRules[op]
	if !ok {
		return nil
	}
	v := reflect.ValueOf(args)
	if !v.IsValid() || v.Type() != rule.typ {
		return tile.Errorf(ErrArgument, op, "args", "%T; want %v", args, rule.typ)
	}
	if v.IsNil() {
		return tile.Errorf(ErrArgument, op, "args", "nil %v", rule.typ)
	}
	s := v.Elem()
	for _, path := range rule.required {
		if b := fieldByPath(s, path).Interface().(*Buffer); b == nil {
			return tile.Errorf(ErrArgument, op, path, "buffer is nil")
		}
	}
	if err := checkBuffers(r, op, "", s); err != nil {
		return err
	}
	for _, f := range rule.positive {
		if n := s.FieldByName(f).Int(); n <= 0 {
			return tile.Errorf(ErrShape, op, f, "%d; must be positive", n)
		}
	}
	if rule.check != nil {
		if err := rule.check(args, r); err != nil {
			return err
		}
	}
	return CheckAlias(op, args)
}

// fieldByPath follows a dotted path of field names.
func fieldByPath(v reflect.Value, path string) reflect.Value {
	for _, name := range strings.Split(path, ".") {
		v = v.FieldByName(name)
	}
	return v
}

// checkBuffers checks every non-nil *Buffer in struct v, recursively.
func checkBuffers(r *Runtime, op, prefix string, v reflect.Value) error {
	if b, path := firstBadBuffer(r, v); b != nil {
		return b.Check(r, op, prefix+path)
	}
	return nil
}

// firstBadBuffer returns the first buffer field (nested structs included)
// that fails Buffer.Check, with its field path; the path is built only for
// it, so a valid call allocates nothing here.
func firstBadBuffer(r *Runtime, v reflect.Value) (*Buffer, string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		switch fv := v.Field(i); {
		case f.Type == bufferType:
			if b := fv.Interface().(*Buffer); b != nil && b.Check(r, "", "") != nil {
				return b, f.Name
			}
		case f.Type.Kind() == reflect.Struct:
			if b, p := firstBadBuffer(r, fv); b != nil {
				return b, f.Name + "." + p
			}
		}
	}
	return nil, ""
}

// checkMatMulArgs checks a matmul's views: shapes agreeing with M, N, K,
// and every view (Batch matrices) within its buffer.
func checkMatMulArgs(args any, _ *Runtime) error {
	a := args.(*MatMulArgs)
	views := []struct {
		name       string
		m          Matrix
		rows, cols int // of op(m)
	}{{"A", a.A, a.M, a.K}, {"B", a.B, a.K, a.N}, {"D", a.D, a.M, a.N}, {"C", a.C, a.M, a.N}}
	for _, v := range views {
		if v.m.Buf == nil { // only C may be nil; CheckArgs required the others
			continue
		}
		if v.m.OpRows() != v.rows || v.m.OpCols() != v.cols {
			return tile.Errorf(ErrShape, OpMatMul, v.name, "op(%s) is %dx%d; want %dx%d", v.name, v.m.OpRows(), v.m.OpCols(), v.rows, v.cols)
		}
		if err := checkMatrixSpan(v.name, v.m, a.Batch); err != nil {
			return err
		}
	}
	if a.Beta != 0 && a.C.Buf == nil {
		return tile.Errorf(ErrArgument, OpMatMul, "C", "Beta is %v but C is nil", a.Beta)
	}
	if a.Bias != nil && a.Bias.Len() < a.N {
		return tile.Errorf(ErrShape, OpMatMul, "Bias", "%d values; want N = %d", a.Bias.Len(), a.N)
	}
	return nil
}

// checkMatrixSpan checks that batch matrices of m lie within m.Buf.
func checkMatrixSpan(name string, m Matrix, batch int) error {
	if m.LD < m.Cols || m.Offset < 0 || m.BatchStride < 0 {
		return tile.Errorf(ErrShape, OpMatMul, name, "LD %d (row %d), offset %d, batch stride %d: want LD ≥ the row, offset and stride ≥ 0",
			m.LD, m.Cols, m.Offset, m.BatchStride)
	}
	last, ok := tile.MulAddSize(batch-1, m.BatchStride, m.Offset)
	if ok {
		last, ok = tile.MulAddSize(m.Rows-1, m.LD, last)
	}
	if ok {
		last, ok = tile.AddSize(last, m.Cols)
	}
	if !ok || last > m.Buf.Len() {
		return tile.Errorf(ErrBounds, OpMatMul, name, "%d matrices %dx%d (LD %d, stride %d, offset %d) reach past the %d elements of the buffer",
			batch, m.Rows, m.Cols, m.LD, m.BatchStride, m.Offset, m.Buf.Len())
	}
	return nil
}

package engine

import (
	"math"

	"github.com/tcrt-go/tcrt/tile"
)

// Operand is one buffer argument of a call: its name (the field path, as
// errors show it), the buffer (nil when unset), the byte span [Off, End)
// the call may read or write, and how. When Stride is positive the call
// touches only the rows of Width bytes that start every Stride bytes from
// Off (a strided matrix view); Stride 0 means the whole span.
type Operand struct {
	Name          string
	Buf           *Buffer
	Off, End      int
	Stride, Width int
	// Written: the call writes the span (an output, or an input it
	// updates).
	Written bool
	// InPlace: an output of the call may be exactly this view (the op
	// updates it in place); any other overlap with an output is aliasing.
	InPlace bool
	// Optional: the buffer may be nil.
	Optional bool
}

// MaxOperands is the most buffer operands one argument struct lists.
const MaxOperands = 8

// Operands is an argument struct's operand list, held by value so that
// listing it allocates nothing.
type Operands struct {
	n    int
	list [MaxOperands]Operand
}

// Args is implemented by the argument struct of every op: it lists the
// call's buffers once, in one place per struct, for validation (CheckArgs,
// CheckAlias), the launch's buffer holds and the host fallback's staging.
type Args interface {
	Operands() Operands
}

// All returns the list (a view of o: it lives as long as o).
func (o *Operands) All() []Operand { return o.list[:o.n] }

// Add appends op. More than MaxOperands is a programming error in an
// argument struct's Operands method, caught by its tests: it panics.
func (o *Operands) Add(op Operand) {
	if o.n == MaxOperands {
		panic("tcrt: Operands: more than MaxOperands operands for " + op.Name)
	}
	o.list[o.n] = op
	o.n++
}

// Buffer appends a whole-buffer operand (nil b: an unset optional one).
func (o *Operands) Buffer(name string, b *Buffer, written, optional bool) {
	op := Operand{Name: name, Buf: b, Written: written, Optional: optional}
	if b != nil {
		op.End = b.Bytes()
	}
	o.Add(op)
}

// Matrix appends the operand of batch matrices m (MatrixOperand).
func (o *Operands) Matrix(name string, m Matrix, batch int, written, inPlace, optional bool) {
	op := MatrixOperand(name, m, batch)
	op.Written, op.InPlace, op.Optional = written, inPlace, optional
	o.Add(op)
}

// MatrixOperand is the operand of batch matrices of m (LD and BatchStride
// resolved): from its first element to past its last, in rows of Cols
// elements every LD when every row starts on that grid. An empty view
// (no rows, columns or matrices) has an empty span.
func MatrixOperand(name string, m Matrix, batch int) Operand {
	op := Operand{Name: name, Buf: m.Buf}
	if m.Buf == nil {
		return op
	}
	sz := m.Buf.DType().Size()
	op.Off, op.End = spanBytes(m.Offset, sz), spanBytes(m.Offset, sz)
	if m.Rows <= 0 || m.Cols <= 0 || batch <= 0 {
		return op
	}
	last, ok := tile.MulAddSize(batch-1, m.BatchStride, m.Offset)
	if ok {
		last, ok = tile.MulAddSize(m.Rows-1, m.LD, last)
	}
	if ok {
		last, ok = tile.AddSize(last, m.Cols)
	}
	if ok {
		last, ok = tile.MulAddSize(last, sz, 0)
	}
	if !ok {
		last = math.MaxInt
	}
	op.End = last
	if m.LD > 0 && (batch == 1 || m.BatchStride%m.LD == 0) {
		op.Stride, op.Width = m.LD*sz, m.Cols*sz
	}
	return op
}

// View appends the operand of an attention view: from its offset to the
// end of its buffer (a paged cache's pages lie anywhere in it).
func (o *Operands) View(name string, v AttnView, written bool) {
	op := Operand{Name: name, Buf: v.Buf, Written: written}
	if v.Buf != nil {
		op.Off, op.End = spanBytes(v.Offset, v.Buf.DType().Size()), v.Buf.Bytes()
	}
	o.Add(op)
}

// spanBytes is element offset off in bytes of elements of sz bytes
// (math.MaxInt on overflow, which no buffer reaches).
func spanBytes(off, sz int) int {
	b, ok := tile.MulAddSize(off, sz, 0)
	if !ok {
		return math.MaxInt
	}
	return b
}

// Overlaps reports whether a and b may share a byte: the same buffer,
// non-empty spans that intersect, unless both step by the same row stride
// and their byte ranges within a row are disjoint (the q and k columns of
// one fused QKV buffer).
func (a Operand) Overlaps(b Operand) bool {
	if a.Buf == nil || a.Buf != b.Buf || a.Off >= a.End || b.Off >= b.End {
		return false
	}
	if a.Off >= b.End || b.Off >= a.End {
		return false
	}
	if a.Stride > 0 && a.Stride == b.Stride {
		ca, cb := a.Off%a.Stride, b.Off%b.Stride
		if ca+a.Width <= a.Stride && cb+b.Width <= b.Stride && (ca+a.Width <= cb || cb+b.Width <= ca) {
			return false // byte r·Stride+c of one is never the other's: c ranges are disjoint
		}
	}
	return true
}

// SameView reports whether a and b are the same bytes in the same rows (an
// in-place update).
func (a Operand) SameView(b Operand) bool {
	return a.Buf == b.Buf && a.Off == b.Off && a.End == b.End && a.Width == b.Width &&
		(a.Stride == b.Stride || a.End-a.Off <= a.Width)
}

// checkAliasOperands is the aliasing rule over one call's operands: no
// written operand overlaps another operand, unless that one is an input
// marked InPlace and exactly the same view.
func checkAliasOperands(op string, ops []Operand) error {
	for i, w := range ops {
		if !w.Written {
			continue
		}
		for j, o := range ops {
			if i == j || !w.Overlaps(o) || !o.Written && o.InPlace && w.SameView(o) {
				continue
			}
			return tile.Errorf(ErrAlias, op, w.Name, "the output overlaps %s", o.Name)
		}
	}
	return nil
}

// checkBuffers checks every operand's buffer: set unless optional, open
// and r's.
func checkBuffers(r *Runtime, op string, ops []Operand) error {
	for _, o := range ops {
		if o.Buf == nil {
			if !o.Optional {
				return tile.Errorf(ErrArgument, op, o.Name, "buffer is nil")
			}
			continue
		}
		if err := o.Buf.Check(r, op, o.Name); err != nil {
			return err
		}
	}
	return nil
}

// checkSpans checks that every non-empty operand span lies within its
// buffer.
func checkSpans(op string, ops []Operand) error {
	for _, o := range ops {
		if o.Buf != nil && o.Off < o.End && (o.Off < 0 || o.End > o.Buf.Bytes()) {
			return tile.Errorf(ErrBounds, op, o.Name, "bytes [%d, %d) reach outside the %d bytes of the buffer", o.Off, o.End, o.Buf.Bytes())
		}
	}
	return nil
}

// CheckAlias returns an error wrapping ErrAlias, naming the output, if an
// output of args (an op's argument struct, Args) overlaps another of its
// operands (Operand.Overlaps: byte spans), other than an input the op may
// update exactly in place. Arguments that list no operands pass. CheckArgs
// applies it to every call.
func CheckAlias(op string, args any) error {
	a, ok := args.(Args)
	if !ok {
		return nil
	}
	ops := a.Operands()
	return checkAliasOperands(op, ops.All())
}

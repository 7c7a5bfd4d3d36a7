package engine

import "sync/atomic"

// Handles turns the public handles of package runtime (*runtime.Runtime,
// *runtime.Buffer, *runtime.Stream, passed as any: a pointer in an
// interface does not allocate) into the engine objects they wrap, nil for
// a nil handle or a value of another type. Package runtime sets the
// functions in its init, so every importer of runtime (ops, model/llama,
// bench) can reach the engine behind a handle while the public types show
// no engine method.
var Handles struct {
	Runtime func(any) *Runtime
	Buffer  func(any) *Buffer
	Stream  func(any) *Stream
}

// handle is the public handle an engine object was wrapped in, kept so
// that one object always has one handle (identity and == hold for users).
type handle struct{ v atomic.Value }

func (h *handle) handleOf() *handle { return h }

// Wrap returns o's public handle, storing mk(o) as the handle when o has
// none yet (concurrent first calls agree on one). Package runtime's only.
func Wrap[O interface {
	*Runtime | *Buffer | *Stream
	handleOf() *handle
}, H any](o O, mk func(O) *H) *H {
	h := o.handleOf()
	if p, ok := h.v.Load().(*H); ok {
		return p
	}
	h.v.CompareAndSwap(nil, mk(o))
	return h.v.Load().(*H)
}

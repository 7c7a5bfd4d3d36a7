package runtime

import "github.com/tcrt-go/tcrt/internal/engine"

func init() {
	engine.Handles.Runtime = func(x any) *engine.Runtime { r, _ := x.(*Runtime); return r.e() }
	engine.Handles.Buffer = func(x any) *engine.Buffer { b, _ := x.(*Buffer); return b.e() }
	engine.Handles.Stream = func(x any) *engine.Stream { s, _ := x.(*Stream); return s.e() }
}

func newRuntime(r *engine.Runtime) *Runtime { return &Runtime{r} }
func newStream(s *engine.Stream) *Stream    { return &Stream{s} }
func newBuffer(b *engine.Buffer) *Buffer    { return &Buffer{b} }

// wrapRuntime is r's handle (nil for nil).
func wrapRuntime(r *engine.Runtime) *Runtime {
	if r == nil {
		return nil
	}
	return engine.Wrap(r, newRuntime)
}

// wrapStream is s's handle (nil for nil).
func wrapStream(s *engine.Stream) *Stream {
	if s == nil {
		return nil
	}
	return engine.Wrap(s, newStream)
}

// wrapBuffer is b's handle, passing err on (nil for a nil b).
func wrapBuffer(b *engine.Buffer, err error) (*Buffer, error) {
	if b == nil {
		return nil, err
	}
	return engine.Wrap(b, newBuffer), err
}

package ops_test

import (
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
)

// The engine objects behind public handles, for the tests that stage
// arguments for a host reference or launch by hand.
func engRT(r *runtime.Runtime) *engine.Runtime { return engine.Handles.Runtime(r) }
func engBuf(b *runtime.Buffer) *engine.Buffer  { return engine.Handles.Buffer(b) }
func engStream(s *runtime.Stream) *engine.Stream {
	return engine.Handles.Stream(s)
}

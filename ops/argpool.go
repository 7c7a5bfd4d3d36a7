package ops

import (
	"context"
	"sync"
	"unsafe"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
)

// pooledArgs is a runtime argument struct A with room for the optional
// views it points at (a gate, a residual, rotated keys). a is the first
// field, so a pointer to it is a pointer to the whole.
type pooledArgs[A any] struct {
	a A
	m [2]engine.Matrix
	// ints and i32 are memory for the call's copied slices (a KV cache's
	// lengths and block table), kept across uses.
	ints []int
	i32  []int32
}

// argPool recycles the argument structs of direct calls, so that a
// synchronous call allocates none: the builders take one from the pool,
// and runPooled gives it back once a synchronous launch has finished
// without error (nothing refers to it then). Structs of asynchronous,
// failed or planned calls are left to the garbage collector.
type argPool[A any] struct{ p sync.Pool }

// get returns a zeroed struct and its view slots.
func (ap *argPool[A]) get() (*A, *[2]engine.Matrix) {
	p := ap.getAll()
	return &p.a, &p.m
}

// getAll returns a zeroed struct with its view slots and slice memory.
func (ap *argPool[A]) getAll() *pooledArgs[A] {
	p, ok := ap.p.Get().(*pooledArgs[A])
	if !ok {
		p = new(pooledArgs[A])
	}
	return p
}

// runPooled runs args (from ap) and recycles them after a synchronous
// call that succeeded.
func runPooled[A any](ctx context.Context, rt *runtime.Runtime, s *runtime.Stream, op string, args *A, ap *argPool[A]) error {
	err := ert(rt).Run(ctx, estream(s), op, args)
	if s == nil && err == nil {
		p := (*pooledArgs[A])(unsafe.Pointer(args))
		*p = pooledArgs[A]{ints: p.ints[:0], i32: p.i32[:0]}
		ap.p.Put(p)
	}
	return err
}

// The pools of the direct calls' argument structs.
var (
	matMulPool    argPool[engine.MatMulArgs]
	attentionPool argPool[engine.AttentionArgs]
	kvAppendPool  argPool[engine.KVAppendArgs]
	normPool      argPool[engine.NormArgs]
	ropePool      argPool[engine.RoPEArgs]
	actPool       argPool[engine.ActArgs]
	eltPool       argPool[engine.EltArgs]
	gatherPool    argPool[engine.GatherArgs]
	samplePool    argPool[engine.SampleArgs]
)

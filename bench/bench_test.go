package bench_test

import (
	"context"
	"testing"

	"github.com/tcrt-go/tcrt/runtime"
)

// backends returns a runtime for every backend this binary and host can
// open, keyed by the name used in benchmark names ("cpu", "cuda").
func backends(b *testing.B) map[string]*runtime.Runtime {
	b.Helper()
	out := map[string]*runtime.Runtime{}
	for _, k := range []runtime.BackendKind{runtime.BackendCPU, runtime.BackendCUDA} {
		if k == runtime.BackendCUDA && !runtime.CUDABuilt() {
			continue
		}
		rt, err := runtime.Open(runtime.Options{Backend: k})
		if err != nil {
			b.Logf("backend %s: %v", k, err)
			continue
		}
		b.Cleanup(func() { rt.Close() })
		out[string(k)] = rt
	}
	return out
}

// backendOrder fixes the sub-benchmark order.
var backendOrder = []string{"cpu", "cuda"}

func ctx() context.Context { return context.Background() }

// eachBackend runs fn as a sub-benchmark named after each backend of rts,
// in backendOrder.
func eachBackend(b *testing.B, rts map[string]*runtime.Runtime, fn func(b *testing.B, rt *runtime.Runtime)) {
	for _, name := range backendOrder {
		if rt, ok := rts[name]; ok {
			b.Run(name, func(b *testing.B) { fn(b, rt) })
		}
	}
}

// timeLoop runs run once untimed (warm-up: kernel selection, first-touch
// memory), then b.N times under the timer, and returns the elapsed seconds.
func timeLoop(b *testing.B, run func() error) float64 {
	b.Helper()
	if err := run(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	return b.Elapsed().Seconds()
}

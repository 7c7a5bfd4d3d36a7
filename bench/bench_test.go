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

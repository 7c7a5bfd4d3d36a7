package ops_test

import (
	"strings"
	"testing"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// TestCPUMaskExplain checks that kernel selection honours the CPU feature
// mask and that Explain shows it: with TCRT_CPU=avx2 the AVX-512 matmul
// kernels are passed over with the mask as the reason.
func TestCPUMaskExplain(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
		t.Skip("needs a CPU with AVX-512 and AVX2")
	}
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mat := func(d tile.DType) ops.Matrix {
		b, err := rt.Alloc(d, 8, 8)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return ops.Matrix{Buf: b, Rows: 8, Cols: 8}
	}
	a, b, d := mat(tile.BF16), mat(tile.BF16), mat(tile.F32)
	for _, c := range []struct{ level, want string }{{"", "cpu.matmul.avx512"}, {"avx2", "cpu.matmul.avx2"}, {"generic", "cpu.matmul.generic"}} {
		restore, err := cpufeat.Set(c.level, "")
		if err != nil {
			t.Fatal(err)
		}
		ex, err := ops.ExplainMatMul(rt, d, a, b, nil)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		k := ex.Chosen()
		if k == nil || !strings.HasPrefix(k.Name, c.want) { // avx512 or avx512bf16
			t.Errorf("mask %q: chose %v\n%s", c.level, k, ex)
		}
		if s := ex.String(); c.level != "" && (!strings.Contains(s, "CPU feature mask: TCRT_CPU="+c.level) || !strings.Contains(s, "AVX512F masked")) {
			t.Errorf("mask %q: explanation does not show the mask:\n%s", c.level, s)
		}
	}
}

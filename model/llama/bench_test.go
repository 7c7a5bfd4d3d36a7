package llama_test

import (
	"context"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkLoad measures Load of the Small model (about 2.6 M parameters)
// on the CPU: opening, validating, and copying (or converting) the weights
// into buffers; GB/s counts the checkpoint's weight bytes.
func BenchmarkLoad(b *testing.B) {
	cfg := llamatest.Small()
	for _, c := range []struct {
		name       string
		stored, as tile.DType
	}{
		{"bf16/small/cpu", tile.BF16, tile.Invalid},
		{"f32-to-bf16/small/cpu", tile.F32, tile.BF16},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := llamatest.WriteRandomCheckpoint(dir, cfg, c.stored, 1, nil); err != nil {
				b.Fatal(err)
			}
			rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			bytes := float64(cfg.NumParams() * c.stored.Size())
			b.ResetTimer()
			for b.Loop() {
				m, err := llama.Load(context.Background(), rt, dir, &llama.LoadOptions{DType: c.as})
				if err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
			b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

package cuda

import (
	"context"
	"fmt"
	"testing"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
)

// BenchmarkCUDAMemcpy/<bytes>/cuda is the device's copy bandwidth (bytes
// read plus written), the yardstick for the memory-bound kernels.
func BenchmarkCUDAMemcpy(b *testing.B) {
	be, err := Open(Config{})
	if err != nil {
		b.Skip("no usable CUDA device:", err)
	}
	defer be.Close()
	const n = 256 << 20
	src, err := be.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	dst, err := be.Alloc(n)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	defer dst.Free()
	st, err := be.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cs := st.(*cudaStream)
	ps, pd := src.(backend.DeviceMemory).DevicePtr(), dst.(backend.DeviceMemory).DevicePtr()
	b.Run(fmt.Sprintf("%d/cuda", n), func(b *testing.B) {
		ctx := context.Background()
		for range b.N {
			err := cs.q.Enqueue(func() error {
				return cs.be.d.w.do(func() error {
					return cudaErr("copy", cs.be.d.drv.MemcpyDtoDAsync(driver.DevicePtr(pd), driver.DevicePtr(ps), n, cs.s))
				})
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := st.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(2*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}

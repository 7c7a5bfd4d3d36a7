package sm86

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

//go:generate go run ./internal/gencubin

// Kernel names in the module.
const (
	QuantizeE4M3  = "tcrt_sass_quantize_e4m3"
	QuantizeE5M2  = "tcrt_sass_quantize_e5m2"
	ScatterAddF32 = "tcrt_sass_scatter_add_f32"
)

// ModuleName is the module's name (the key the CUDA backend loads it
// under).
const ModuleName = "sass_sm86"

// Archs are the architectures the module has cubins for.
var Archs = []int{86, 89}

// What go generate wrote: cubin/sass.sm_<arch>.cubin for each
// architecture of Archs. Embedded as byte slices, so a program that never
// loads them pays nothing at start-up (an embed.FS read copies).
var (
	//go:embed cubin/sass.sm_86.cubin
	cubin86 []byte
	//go:embed cubin/sass.sm_89.cubin
	cubin89 []byte
)

// cubins are the embedded cubins by architecture.
var cubins = map[int][]byte{86: cubin86, 89: cubin89}

// QuantizeKernel returns the quantisation kernel's name for format d
// (tile.E4M3 or tile.E5M2), "" for any other type.
func QuantizeKernel(d tile.DType) string {
	switch d {
	case tile.E4M3:
		return QuantizeE4M3
	case tile.E5M2:
		return QuantizeE5M2
	}
	return ""
}

// ErrNotEncodable marks an architecture whose kernels use instruction
// forms the sass model cannot encode yet (sm_89's F2FP float8 converts,
// until package sass has them): no cubin is built or embedded for it.
var ErrNotEncodable = errors.New("sm86: the model cannot encode this module yet")

// Module returns the embedded cubins as a module for runtime.LaunchGPU.
// It has no PTX: on a device outside sm_86..sm_89 Select fails and the
// runtime must not choose these kernels (their registration says so).
// Without an sm_89 cubin (ErrNotEncodable) an sm_89 device loads the sm_86
// one, which runs there.
func Module() *backend.Module {
	m := &backend.Module{Name: ModuleName, Cubins: map[int][]byte{}}
	for _, arch := range Archs {
		if b := Embedded(arch); b != nil {
			m.Cubins[arch] = b
		}
	}
	return m
}

// ModuleFor returns a module holding only the sm_<arch> cubin (named
// ModuleName + "_<arch>"), so a caller can insist on it: the sm_86 code on
// an sm_89 device. It is nil when that cubin is not embedded.
func ModuleFor(arch int) *backend.Module {
	b := Embedded(arch)
	if b == nil {
		return nil
	}
	return &backend.Module{Name: fmt.Sprintf("%s_%d", ModuleName, arch), Cubins: map[int][]byte{arch: b}}
}

// Embedded returns the embedded cubin for sm_<arch>, nil if there is none.
func Embedded(arch int) []byte {
	if b := cubins[arch]; len(b) > 0 {
		return b
	}
	return nil
}

package sm86

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
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

// Programs returns every kernel of the sm_<arch> module by name.
func Programs(arch int) (map[string]sass.Program, error) {
	e4, err := Quantize(arch, tile.E4M3)
	if err != nil {
		return nil, err
	}
	e5, err := Quantize(arch, tile.E5M2)
	if err != nil {
		return nil, err
	}
	progs := map[string]sass.Program{QuantizeE4M3: e4, QuantizeE5M2: e5, ScatterAddF32: ScatterAdd()}
	ks, err := familyKernels(arch)
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		progs[k.name] = k.prog()
	}
	return progs, nil
}

// Kernels returns the cubin descriptions of the sm_<arch> module's
// kernels, in a fixed order.
func Kernels(arch int) ([]cubin.Kernel, error) {
	progs, err := Programs(arch)
	if err != nil {
		return nil, err
	}
	var out []cubin.Kernel
	names := []string{QuantizeE4M3, QuantizeE5M2, ScatterAddF32}
	shapes := map[string][]cubin.Param{QuantizeE4M3: quantParams, QuantizeE5M2: quantParams, ScatterAddF32: scatterParams}
	ks, err := familyKernels(arch)
	if err != nil {
		return nil, err
	}
	for _, k := range ks {
		names = append(names, k.name)
		shapes[k.name] = k.params
	}
	for _, name := range names {
		p := progs[name]
		code, err := sass.Encode(p)
		if errors.Is(err, sass.ErrNoForm) || errors.Is(err, sass.ErrUnknownOp) {
			return nil, fmt.Errorf("%w: %s for sm_%d: %w", ErrNotEncodable, name, arch, err)
		}
		if err != nil {
			return nil, fmt.Errorf("sm86: %s for sm_%d: %w", name, arch, err)
		}
		params, block := shapes[name], SGBlock // every kernel's block is 256 threads (QuantBlock too)
		out = append(out, cubin.Kernel{Name: name, Code: code, Params: params, Registers: registers(p),
			ReqThreads: [3]int{block, 1, 1}, ExitOffsets: exitOffsets(p)})
	}
	return out, nil
}

// Cubin assembles the module for sm_<arch> (86 or 89): what go generate
// writes to cubin/sass.sm_<arch>.cubin. The error wraps ErrNotEncodable
// when the model lacks a form the kernels use.
func Cubin(arch int) ([]byte, error) {
	ks, err := Kernels(arch)
	if err != nil {
		return nil, err
	}
	return cubin.Write(arch, ks...)
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

// familyKernels is every generated kernel of the sm_<arch> module beyond
// the per-tensor quantisers and ScatterAddF32: scatter-gather, amax,
// dequantise (sg.go, amax.go, dequant.go) and MX quantise (quant_mx.go).
func familyKernels(arch int) ([]sgKernel, error) {
	mx, err := mxKernels(arch)
	if err != nil {
		return nil, err
	}
	return append(append([]sgKernel{}, sgKernels...), mx...), nil
}

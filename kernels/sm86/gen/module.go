package gen

import (
	"errors"
	"fmt"

	"github.com/tcrt-go/tcrt/kernels/internal/sasskit"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

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
	progs := map[string]sass.Program{sm86.QuantizeE4M3: e4, sm86.QuantizeE5M2: e5, sm86.ScatterAddF32: ScatterAdd()}
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
	names := []string{sm86.QuantizeE4M3, sm86.QuantizeE5M2, sm86.ScatterAddF32}
	shapes := map[string][]cubin.Param{sm86.QuantizeE4M3: quantParams, sm86.QuantizeE5M2: quantParams, sm86.ScatterAddF32: scatterParams}
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
		params, block := shapes[name], sm86.SGBlock // every kernel's block is 256 threads (sm86.QuantBlock too)
		k, err := sasskit.Kernel(p, cubin.Kernel{Name: name, Params: params, Registers: registers(p),
			ReqThreads: [3]int{block, 1, 1}, ExitOffsets: exitOffsets(p)})
		if errors.Is(err, sass.ErrNoForm) || errors.Is(err, sass.ErrUnknownOp) {
			return nil, fmt.Errorf("%w: %s for sm_%d: %w", sm86.ErrNotEncodable, name, arch, err)
		}
		if err != nil {
			return nil, fmt.Errorf("sm86: %s for sm_%d: %w", name, arch, err)
		}
		out = append(out, k)
	}
	return out, nil
}

// Cubin assembles the module for sm_<arch> (86 or 89): what go generate
// writes to cubin/sass.sm_<arch>.cubin. The error wraps sm86.ErrNotEncodable
// when the model lacks a form the kernels use.
func Cubin(arch int) ([]byte, error) {
	ks, err := Kernels(arch)
	if err != nil {
		return nil, err
	}
	return cubin.Write(arch, ks...)
}

// familyKernels is every generated kernel of the sm_<arch> module beyond
// the per-tensor quantisers and sm86.ScatterAddF32: scatter-gather, amax,
// dequantise (sg.go, amax.go, dequant.go) and MX quantise (quant_mx.go).
func familyKernels(arch int) ([]sgKernel, error) {
	mx, err := mxKernels(arch)
	if err != nil {
		return nil, err
	}
	return append(append([]sgKernel{}, sgKernels...), mx...), nil
}

package gen

import (
	"github.com/tcrt-go/tcrt/kernels/internal/sasskit"
	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

// ModuleCubin generates the module's cubin for arch (86 or 89) from the
// generator as it is now; go generate writes it to cubin/, and
// TestEmbeddedCubinsCurrent fails when the embedded files differ.
func ModuleCubin(arch int) ([]byte, error) {
	ks, err := sasskit.Kernels(sm86attn.Variants(), Generate)
	if err != nil {
		return nil, err
	}
	cs, err := sasskit.Kernels(sm86attn.CombineVariants(), GenerateCombine)
	if err != nil {
		return nil, err
	}
	ks = append(ks, cs...)
	return cubin.Write(arch, ks...)
}

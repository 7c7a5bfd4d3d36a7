package gen

import (
	"fmt"

	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

// ModuleCubin generates the module's cubin for arch (86 or 89) from the
// generator as it is now; go generate writes it to cubin/, and
// TestEmbeddedCubinsCurrent fails when the embedded files differ.
func ModuleCubin(arch int) ([]byte, error) {
	var ks []cubin.Kernel
	for _, c := range sm86attn.Variants() {
		p, err := Generate(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		k, err := p.Kernel()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		ks = append(ks, k)
	}
	for _, c := range sm86attn.CombineVariants() {
		p, err := GenerateCombine(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		k, err := p.Kernel()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		ks = append(ks, k)
	}
	return cubin.Write(arch, ks...)
}

package fallback

import (
	"fmt"

	"github.com/klauspost/cpuid/v2"
)

// MatMulVariant describes one fast-path micro-kernel family.
type MatMulVariant struct {
	Name     string
	Features []cpuid.FeatureID
	MR, NR   int
}

// Available reports whether the CPU supports the variant.
func (v MatMulVariant) Available() bool { return cpuid.CPU.Supports(v.Features...) }

// MatMulVariants lists the compiled-in variants, best first.
func MatMulVariants() []MatMulVariant { return []MatMulVariant{{Name: "generic", MR: 1, NR: 1}} }

// MatMulFast runs the named variant. (Placeholder until the fast path lands.)
func MatMulFast(variant string, a *MatMulArgs) error {
	if variant != "generic" {
		return fmt.Errorf("fallback: unknown matmul variant %q", variant)
	}
	MatMulRef(a)
	return nil
}

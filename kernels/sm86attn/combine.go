package sm86attn

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

// CombineConfig selects a split-KV combine kernel: it merges the splits'
// partial outputs (f32, each normalised by its own sum) by their LSE:
// O = Σ_s w_s·O_s / Σ_s w_s with w_s = exp(LSE_s − max LSE), and the LSE
// max + ln Σ w_s (−Inf, with O zero, when no split saw a key).
type CombineConfig struct {
	HeadDim int        // 64, 128 or 256
	Out     tile.DType // one of Outputs
}

// Name returns the kernel's symbol name.
func (c CombineConfig) Name() string {
	return fmt.Sprintf("%sd%d_%s", combinePrefix, c.HeadDim, c.Out)
}

// combinePrefix begins every combine kernel's name.
const combinePrefix = "tcrt_sm86_attn_combine_"

// CombineThreads is the combine kernel's CTA: one warp per (query row,
// head), grid (nq, headsQ, batch).
const CombineThreads = 32

// CombineParams is the combine kernel's parameter list: partial O,
// partial LSE, O, LSE (u64), splits, oSplit, lseSplit, O strides (seq,
// head, batch), LSE strides (head, batch) in bytes, nq, headsQ (u32),
// CuSeqQ (u64, 0 for fixed-length queries). With CuSeqQ, CTA (i, h, b)
// is row CuSeqQ[b] + i of batch 0 (exiting when i is past the sequence)
// and nq is the batch's total rows, the workspace's row count.
func CombineParams() []cubin.Param {
	var p []cubin.Param
	for k := 0; k < 4; k++ {
		p = append(p, cubin.Param{Size: 8, Align: 8})
	}
	for k := 0; k < (0x48-0x20)/4; k++ {
		p = append(p, cubin.Param{Size: 4, Align: 4})
	}
	return append(p, cubin.Param{Size: 8, Align: 8})
}

// CombineVariants lists every combine kernel the package ships.
func CombineVariants() []CombineConfig {
	var out []CombineConfig
	for _, d := range []int{64, 128, 256} {
		for _, o := range Outputs() {
			out = append(out, CombineConfig{HeadDim: d, Out: o})
		}
	}
	return out
}

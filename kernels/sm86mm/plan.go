package sm86mm

import (
	"fmt"

	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

// The device-level operator: how one matmul call runs on these kernels
// (tile choice, split-K, grid, parameter packing), in plain values. The
// runtime's registration (runtime/sm86mm.go) and the simulator tests both
// call Plan, so there is one copy of it.
//
// Tile rule: M ≤ 64 takes the 64×128 small-M tile; else N ≤ 64 takes
// 128×64; else 128×128.
//
// Split-K: when the activation is none, D is f32, K ≥ 1024 and the tile
// grid fills fewer than half the device's SMs, K is cut into
// s = min(ceil(SMs / CTAs), K/256, 16) chunks of kc = roundUp(ceil(K/s), 32):
// the plain kernel computes the first chunk with β·C and bias (so D needs no
// zeroing), then the split kernel's CTAs (grid z = the other chunks) add α
// times their partial products with RED.E.ADD.F32 (so the sum's order, and
// its last bits, vary from run to run). An activation cannot follow the
// reduction in-kernel, so calls with one are never split.

// Problem is one matmul call, D = act(α·op(A)·op(B) + β·C + bias), in
// device terms: addresses of the first element of each operand, leading
// dimensions in elements, and the kernel variant's types and layouts.
type Problem struct {
	M, N, K        int
	In             tile.DType // one of Inputs()
	Out            tile.DType // one of Outputs()
	TransA, TransB bool
	// D, A, B are required; C is read when Beta != 0; Bias (f32, N
	// values) may be 0.
	D, A, B, C, Bias   uint64
	LDD, LDA, LDB, LDC int
	Alpha, Beta        float32
	// Act is the activation (its value is the kernel's code).
	Act tile.Activation
	// NoSplit forbids split-K (a caller wanting deterministic bits).
	NoSplit bool
	// Splits, when positive, fixes the number of K chunks instead of the
	// rule (tests use it to reach split-K on small shapes); 1 forbids it.
	Splits int
}

// Launch is one kernel launch of a plan: the device seam's launch
// description, Params with one 8-byte slot per kernel parameter (see
// package ptx; PackParams lays them out for a parameter window). Func is
// the variant's Config.Name. Plans leave Module nil; the caller launches
// in this package's Module.
type Launch = backend.Launch

// PlanInfo says how a call runs.
type PlanInfo struct {
	Tile   Tile
	Splits int // K chunks, 1 = no split
	KC     int // chunk length (split only)
}

// String describes the plan.
func (p PlanInfo) String() string {
	g := Config{Tile: p.Tile}.Geometry()
	if p.Splits > 1 {
		return fmt.Sprintf("tile %s, split-K %d x %d", g, p.Splits, p.KC)
	}
	return "tile " + g.String()
}

// Choose returns the plan for an M×N×K call on a device with sms
// multiprocessors; split says whether split-K is allowed (no activation, f32
// output, not forbidden).
func Choose(M, N, K, sms int, split bool) PlanInfo {
	p := PlanInfo{Tile: Tile128x128, Splits: 1}
	switch {
	case M <= 64:
		p.Tile = Tile64x128
	case N <= 64:
		p.Tile = Tile128x64
	}
	g := Config{Tile: p.Tile}.Geometry()
	ctas := ((M + g.TM - 1) / g.TM) * ((N + g.TN - 1) / g.TN)
	if split && K >= 1024 && ctas > 0 && 2*ctas < sms {
		s := min((sms+ctas-1)/ctas, K/256, 16)
		if s > 1 {
			kc := ((K+s-1)/s + TileK - 1) / TileK * TileK
			p.Splits, p.KC = (K+kc-1)/kc, kc
		}
	}
	return p
}

// Plan returns the launches that compute p on a device with sms
// multiprocessors, in order (the split kernel after the plain one, on the
// same stream).
func Plan(p Problem, sms int) (PlanInfo, []Launch) {
	info := Choose(p.M, p.N, p.K, sms, !p.NoSplit && p.Act == tile.ActNone && p.Out == tile.F32)
	if p.Splits > 0 {
		info.Splits, info.KC = 1, 0
		if kc := ((p.K+p.Splits-1)/p.Splits + TileK - 1) / TileK * TileK; p.Splits > 1 && kc > 0 {
			info.Splits, info.KC = (p.K+kc-1)/kc, kc
		}
	}
	c := Config{Tile: info.Tile, In: p.In, Out: p.Out, TransA: p.TransA, TransB: p.TransB}
	g := c.Geometry()
	beta, cp, ldc := p.Beta, p.C, p.LDC
	if cp == 0 {
		beta, ldc = 0, 0
	}
	params := func(K, kc, koff int, beta float32, cp, bias uint64) []uint64 {
		return []uint64{ptx.Ptr(p.D), ptx.Ptr(p.A), ptx.Ptr(p.B),
			ptx.U32(uint32(p.M)), ptx.U32(uint32(p.N)), ptx.U32(uint32(K)),
			ptx.U32(uint32(p.LDA)), ptx.U32(uint32(p.LDB)), ptx.U32(uint32(p.LDD)),
			ptx.F32(p.Alpha), ptx.F32(beta), ptx.U32(uint32(ldc)), ptx.U32(uint32(p.Act)),
			ptx.Ptr(cp), ptx.Ptr(bias), ptx.U32(uint32(kc)), ptx.U32(uint32(koff))}
	}
	k0 := p.K
	if info.Splits > 1 {
		k0 = info.KC
	}
	ls := []Launch{{Func: c.Name(), Grid: g.Grid(p.M, p.N, 0), Block: [3]int{g.Threads(), 1, 1},
		SharedBytes: g.SharedBytes(), Params: params(k0, 0, 0, beta, cp, p.Bias)}}
	if info.Splits > 1 {
		sc := c
		sc.SplitK = true
		ls = append(ls, Launch{Func: sc.Name(), Grid: g.Grid(p.M, p.N, info.Splits-1), Block: [3]int{g.Threads(), 1, 1},
			SharedBytes: g.SharedBytes(), Params: params(p.K, info.KC, info.KC, 0, 0, 0)})
	}
	return info, ls
}

// PackParams lays the parameter slots out in the kernels' parameter window
// (Params' offsets), as the driver does from the cubin's records.
func PackParams(slots []uint64) ([]byte, error) {
	ps := Params()
	if len(slots) != len(ps) {
		return nil, fmt.Errorf("sm86mm: %d parameter slots, the kernels take %d", len(slots), len(ps))
	}
	offs, size, err := cubin.ParamLayout(ps)
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	for i, v := range slots {
		for j := 0; j < ps[i].Size; j++ {
			out[offs[i]+j] = byte(v >> (8 * j))
		}
	}
	return out, nil
}

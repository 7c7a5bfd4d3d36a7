package gen

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/sass/sim"
	"github.com/tcrt-go/tcrt/tile"
)

// laneAddresses runs the kernel of c built with the dump (generate's
// dumpAt) in the simulator, one CTA of a 64 x 64 problem, and returns the
// shared-address registers of every thread (dumpRegs order).
func laneAddresses(t *testing.T, c sm86attn.Config) [][]uint32 {
	t.Helper()
	const out = 0x60000000000
	p, err := generate(c, out)
	if err != nil {
		t.Fatal(err)
	}
	mem := sim.NewMemory()
	n := 64 * c.HeadDim
	rng := rand.New(rand.NewPCG(3, 4))
	for i, name := range []string{"Q", "K", "V", "O"} {
		buf := make([]byte, 4*n)
		for k := range buf {
			buf[k] = byte(rng.IntN(64)) // finite halves
		}
		if err := mem.Map(name, uint64(i+1)<<40, buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := mem.Map("out", out, make([]byte, 64*c.CTAThreads())); err != nil {
		t.Fatal(err)
	}
	st := [3]int{n, c.HeadDim, c.HeadDim}
	l, err := sm86attn.PlanPrefill(sm86attn.PrefillArgs{Q: 1 << 40, K: 2 << 40, V: 3 << 40, O: 4 << 40, Batch: 1, HeadsQ: 1, HeadsKV: 1,
		HeadDim: c.HeadDim, SeqQ: c.Rows(), SeqKV: 64, QStrides: st, KStrides: st, VStrides: st, OStrides: st,
		In: c.In, Out: c.Out, Scale: 1, WindowLeft: -1, WindowRight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Launch(p.Insts, sim.Config{Grid: [3]int{1, 1, 1}, Block: l.Block, SharedBytes: l.SharedBytes, Params: packed(t, l), Memory: mem}); err != nil {
		t.Fatalf("%s: %v", c.Name(), err)
	}
	got := mem.Bytes("out")
	var vals [][]uint32
	for tid := 0; tid < c.CTAThreads(); tid++ {
		var v []uint32
		for j := range newRegs(c.HeadDim).dumpRegs() {
			v = append(v, binary.LittleEndian.Uint32(got[64*tid+4*j:]))
		}
		vals = append(vals, v)
	}
	return vals
}

// TestSharedBankConflicts: with the addresses the generated code computes
// (run in the simulator) and the offsets of the generated LDSM and LDGSTS
// instructions, every LDSM matrix (8 lanes, 16 bytes each) of Q, K and V
// and every 8 consecutive threads' 16-byte copies hit 8 distinct 16-byte
// bank groups, and one block's copies write each 16-byte chunk of the
// K/V stage (and the Q tile's copies each chunk of the Q tile) exactly
// once, for head dimensions 64, 128 and 256; at 256 the partial-S
// exchange's STS.128/LDS.128 too (8 lanes a phase), each warp's area
// disjoint from the others' and from the stages.
func TestSharedBankConflicts(t *testing.T) {
	for _, c := range []sm86attn.Config{{In: tile.F16, Out: tile.F32, HeadDim: 64}, {In: tile.F16, Out: tile.F32, HeadDim: 128}, {In: tile.F16, Out: tile.F32, HeadDim: 256}, {In: tile.F16, Out: tile.F32, HeadDim: 64, Decode: true}, {In: tile.F16, Out: tile.F32, HeadDim: 128, Decode: true}, {In: tile.F16, Out: tile.F32, HeadDim: 256, Decode: true}} {
		d := c.HeadDim
		if l, err := sm86attn.PlanPrefill(sm86attn.PrefillArgs{In: c.In, Out: c.Out, Batch: 1, HeadsQ: 1, HeadsKV: 1, HeadDim: d, SeqQ: c.Rows(), SeqKV: 64, Scale: 1, WindowLeft: -1, WindowRight: -1}); err != nil || l.Func != c.Name() {
			t.Fatalf("%s: the plan selects %s, %v", c.Name(), l.Func, err)
		}
		threads := c.CTAThreads()
		vals := laneAddresses(t, c)
		g := newRegs(d)
		col := map[int]int{}
		for j, rg := range g.dumpRegs() {
			col[rg] = j
		}
		groups := func(what string, addr func(tid int) uint32, first, n int) {
			seen := map[uint32]bool{}
			for tid := first; tid < first+n; tid++ {
				a := addr(tid)
				if a%16 != 0 {
					t.Fatalf("d%d %s: thread %d address %#x unaligned", d, what, tid, a)
				}
				if seen[(a>>4)&7] {
					t.Errorf("d%d %s: threads %d..%d conflict (thread %d at %#x)", d, what, first, first+n-1, tid, a)
					return
				}
				seen[(a>>4)&7] = true
			}
		}
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		// the LDSMs of the unmasked loop (K, V) read registers the dump holds
		nLD := 0
		for _, in := range p.Insts[p.Loop[0]:p.Loop[1]] {
			if in.Op != "LDSM" {
				continue
			}
			m := in.Args[1]
			j, ok := col[int(m.N)]
			if !ok {
				t.Fatalf("%s: LDSM base %v not dumped", in, m)
			}
			nLD++
			for q := 0; q < threads/8; q++ {
				groups(in.String(), func(tid int) uint32 { return vals[tid][j] + uint32(m.Imm) }, 8*q, 8)
			}
		}
		if want := 4 * (dw(c)/16*nTiles(c)/8 + nKK(c)*dw(c)/64); nLD != want {
			t.Errorf("d%d: %d LDSM in the loop, want %d", d, nLD, want)
		}
		if c.Wide() {
			// the exchange: own area at xs, the partner's at xs ^ 4 areas
			areas := map[uint32]int{}
			nx := 0
			for _, in := range p.Insts[p.Loop[0]:p.Loop[1]] {
				if (in.Op != "STS" && in.Op != "LDS") || strings.Join(in.Mods, ".") != "128" {
					continue
				}
				nx++
				m := in.Args[0]
				if in.Op == "LDS" {
					m = in.Args[1]
				}
				flip := uint32(0)
				if in.Op == "LDS" {
					flip = 4 * sm86attn.ExchangeBytes
				}
				for q := 0; q < threads/8; q++ {
					groups(in.String(), func(tid int) uint32 { return (vals[tid][col[g.xs]] ^ flip) + uint32(m.Imm) }, 8*q, 8)
				}
				if in.Op == "STS" {
					for tid := 0; tid < threads; tid++ {
						a := vals[tid][col[g.xs]] + uint32(m.Imm)
						if a < uint32(sm86attn.Stages*c.StageBytes()) || a+16 > uint32(c.SharedBytes()) {
							t.Errorf("d%d: exchange store at %#x outside the area", d, a)
						}
						areas[a]++
					}
				}
			}
			if nx != 2*nTiles(c) || len(areas) != threads*nTiles(c) {
				t.Errorf("d%d: %d exchange accesses, %d distinct 16-byte stores (want %d, %d)", d, nx, len(areas), 2*nTiles(c), threads*nTiles(c))
			}
		}
		// Q: the prologue's lane base (the V lane base of stage 0 moved to
		// the Q tile and the warp's rows), chunk pair ks: ^32(ks&3) +
		// 128(ks>>2)
		for ks := 0; ks < dw(c)/16; ks++ {
			for q := 0; q < threads/8; q++ {
				groups("Q LDSM", func(tid int) uint32 {
					base := vals[tid][col[g.va]] + uint32(c.StageBytes()-c.KeyBlock()*c.RowBytes()) + vals[tid][col[g.warp]]*uint32(16*c.RowBytes())
					return (base ^ uint32(32*(ks%4))) + uint32(128*(ks/4))
				}, 8*q, 8)
			}
		}
		// copies: the next block's (bases t+9 and the decode variant's alt
		// t+11, at the dump's first block the other stage) and, moved back
		// a stage, this block's, over the loop's LDGSTS offsets; each stage
		// chunk exactly once
		sb := uint32(c.StageBytes())
		for _, back := range []uint32{0, sb} {
			chunks := map[uint32]int{}
			for _, in := range p.Insts[p.Loop[0]:p.Loop[1]] {
				if in.Op != "LDGSTS" {
					continue
				}
				m := in.Args[0]
				j, ok := col[int(m.N)]
				if !ok {
					t.Fatalf("%s: %s base not dumped", c.Name(), in)
				}
				for q := 0; q < threads/8; q++ {
					groups(in.String(), func(tid int) uint32 { return vals[tid][j] + uint32(m.Imm) - back }, 8*q, 8)
				}
				for tid := 0; tid < threads; tid++ {
					chunks[vals[tid][j]+uint32(m.Imm)-back]++
				}
			}
			lo := sb - back
			for a := lo; a < lo+uint32(c.StageBytes()); a += 16 {
				if chunks[a] != 1 {
					t.Errorf("d%d: stage chunk %#x written %d times", d, a, chunks[a])
				}
			}
			if len(chunks) != c.StageBytes()/16 {
				t.Errorf("d%d: copies write %d chunks, want %d", d, len(chunks), c.StageBytes()/16)
			}
		}
	}
}

package gen

import (
	"encoding/binary"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/sched"
	"github.com/tcrt-go/tcrt/sass/sim"
	"github.com/tcrt-go/tcrt/tile"
)

// laneAddresses runs the generated set-up of c (everything before the
// prologue's first copy) in the simulator, one CTA, with a store of the
// shared-address registers appended, and returns them per thread: the
// copy destinations rDA, rDB and the LDSM lane bases rLA0..3, rLB0..1.
func laneAddresses(t *testing.T, c sm86mm.Config) (regs []int, vals [][]uint32) {
	t.Helper()
	p, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	end := -1
	for k, i := range p.Insts {
		if i.Op == "LDGSTS" {
			break
		}
		if i.Op == "MOV" && len(i.Args) == 2 && i.Args[0].Kind == sass.KReg && (int(i.Args[0].N) == rAB1 || int(i.Args[0].N) == rAA3) {
			end = k
		}
	}
	if end < 0 {
		t.Fatalf("%s: set-up end not found", c.Name())
	}
	regs = []int{rDA, rDB, rLA0, rLA1, rLA2, rLA3, rLB0, rLB1}
	b := &builder{c: c, g: c.Geometry()}
	b.Prog = append(b.Prog, p.Insts[:end+1]...)
	b.add(ptr(rPD, rTid, pD, 5, sass.P0)...)
	for j, rg := range regs {
		b.add(sass.New("STG", "E", sass.G64(sass.Reg(rPD), int64(4*j)), r(rg)))
	}
	b.add(sass.New("EXIT", "").Yield())
	if err := b.FixStalls(sched.DefaultLatencies()); err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(b.Prog)
	if err != nil {
		t.Fatal(err)
	}
	g := c.Geometry()
	T := g.Threads()
	mem := sim.NewMemory()
	const out = 0x30000000000
	buf := make([]byte, 32*T)
	if err := mem.Map("out", out, buf); err != nil {
		t.Fatal(err)
	}
	_, ls := sm86mm.Plan(sm86mm.Problem{M: 256, N: 256, K: 256, D: out, A: 0x10000000000, B: 0x20000000000, LDA: 264, LDB: 264, LDD: 256, Alpha: 1, NoSplit: true}, 1)
	par, err := sm86mm.PackParams(ls[0].Params)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Launch(sim.Config{StrictScoreboards: true, Grid: [3]int{1, 1, 1}, Block: [3]int{T, 1, 1}, SharedBytes: g.SharedBytes(), Params: par, Memory: mem}); err != nil {
		t.Fatalf("%s: %v", c.Name(), err)
	}
	got := mem.Bytes("out")
	for tid := 0; tid < T; tid++ {
		var v []uint32
		for j := range regs {
			v = append(v, binary.LittleEndian.Uint32(got[32*tid+4*j:]))
		}
		vals = append(vals, v)
	}
	return regs, vals
}

// TestSharedBankConflicts: with the addresses the generated code computes
// (run in the simulator), every LDSM matrix (8 lanes, 16 bytes each) and
// every 8 consecutive threads' 16-byte copies hit 8 distinct 16-byte bank
// groups, and one K tile's copies write each 16-byte chunk of the stage
// exactly once, for every tile and layout.
func TestSharedBankConflicts(t *testing.T) {
	for _, l := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		for _, tl := range sm86mm.Tiles() {
			c := sm86mm.Config{Tile: tl, In: tile.F16, Out: tile.F32, TransA: l[0], TransB: l[1]}
			regs, vals := laneAddresses(t, c)
			col := map[int]int{}
			for j, rg := range regs {
				col[rg] = j
			}
			b := &builder{c: c, g: c.Geometry()}
			T := b.g.Threads()
			groups := func(what string, addr func(tid int) uint32, first, n int) {
				seen := map[uint32]bool{}
				for tid := first; tid < first+n; tid++ {
					a := addr(tid)
					if a%16 != 0 {
						t.Fatalf("%s %s: thread %d address %#x unaligned", c.Name(), what, tid, a)
					}
					if seen[(a>>4)&7] {
						t.Errorf("%s %s: threads %d..%d conflict (thread %d at %#x)", c.Name(), what, first, first+n-1, tid, a)
						return
					}
					seen[(a>>4)&7] = true
				}
			}
			// LDSM: the address registers hold lane base + stage 0
			base := map[sass.Reg]int{rAA0: rLA0, rAA1: rLA1, rAA2: rLA2, rAA3: rLA3, rAB0: rLB0, rAB1: rLB1}
			for ks := 0; ks < 2; ks++ {
				for _, in := range b.ldsmSet(rF0A, rF0B, ks, sass.SB2) {
					m := in.Args[1]
					for w := 0; w < T/32; w++ {
						for q := 0; q < 4; q++ {
							groups(in.String(), func(tid int) uint32 { return vals[tid][col[base[sass.Reg(m.N)]]] + uint32(m.Imm) }, 32*w+8*q, 8)
						}
					}
				}
			}
			// copies of stage 0
			chunks := map[uint32]int{}
			_, copies, _ := b.copyTile(rDA, rDB, 0)
			for _, in := range copies {
				if in.Op != "LDGSTS" {
					continue
				}
				m := in.Args[0]
				for q := 0; q < T/8; q++ {
					groups(in.String(), func(tid int) uint32 { return vals[tid][col[int(m.N)]] + uint32(m.Imm) }, 8*q, 8)
				}
				for tid := 0; tid < T; tid++ {
					chunks[vals[tid][col[int(m.N)]]+uint32(m.Imm)]++
				}
			}
			for a := 0; a < b.g.StageBytes(); a += 16 {
				if chunks[uint32(a)] != 1 {
					t.Errorf("%s: stage chunk %#x written %d times", c.Name(), a, chunks[uint32(a)])
				}
			}
		}
	}
}

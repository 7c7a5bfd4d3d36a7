package sm86attn

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

func basePlanArgs() PrefillArgs {
	st := [3]int{1024 * 8 * 128, 8 * 128, 128}
	return PrefillArgs{Q: 1 << 40, K: 2 << 40, V: 3 << 40, O: 4 << 40, In: tile.F16, Out: tile.F32, Batch: 2, HeadsQ: 8, HeadsKV: 2, HeadDim: 128,
		SeqQ: 100, SeqKV: 1000, QStrides: st, KStrides: st, VStrides: st, OStrides: st, Scale: 0.1,
		WindowLeft: -1, WindowRight: -1}
}

// TestPlanPrefill: the grid packs a KV head's query heads into one CTA
// when the group is above 1, the kernel and shared size follow the
// configuration, and every rule outside the kernels is an ErrUnsupported
// naming it.
func TestPlanPrefill(t *testing.T) {
	a := basePlanArgs()
	l, err := PlanPrefill(a)
	if err != nil {
		t.Fatal(err)
	}
	if want := [3]int{(100*4 + 63) / 64, 2, 2}; l.Grid != want {
		t.Errorf("GQA grid %v, want %v (rows of 4 heads packed, one CTA column per KV head)", l.Grid, want)
	}
	if l.Func != (Config{In: tile.F16, Out: tile.F32, HeadDim: 128}).Name() || l.SharedBytes != 65536 || l.Block != [3]int{128, 1, 1} {
		t.Errorf("launch %s %d %v", l.Func, l.SharedBytes, l.Block)
	}
	a.HeadsKV = 8
	if l, err = PlanPrefill(a); err != nil || l.Grid != [3]int{2, 8, 2} {
		t.Errorf("MHA grid %v, %v", l.Grid, err)
	}
	// head dimension 256: 8 warps, two stages of 32-key K and V tiles
	// (64 KiB) and the 16 KiB exchange
	a = basePlanArgs()
	a.HeadDim, a.QStrides, a.KStrides, a.VStrides, a.OStrides = 256, [3]int{1 << 20, 2048, 256}, [3]int{1 << 20, 512, 256}, [3]int{1 << 20, 512, 256}, [3]int{1 << 20, 2048, 256}
	if l, err = PlanPrefill(a); err != nil || l.Func != (Config{In: tile.F16, Out: tile.F32, HeadDim: 256}).Name() || l.SharedBytes != 81920 || l.Block != [3]int{256, 1, 1} || l.Grid != [3]int{(100*4 + 63) / 64, 2, 2} {
		t.Errorf("d256 launch %s %d %v %v, %v", l.Func, l.SharedBytes, l.Block, l.Grid, err)
	}
	// decode (one query, group 4: 4 rows) selects the 16-row variant: one
	// row tile of 2 warps, 16-key blocks (two stages of 16 KiB, the
	// exchange of 2 warps)
	a.Splits, a.Workspace, a.SeqQ, a.SeqKV = 3, 5<<40, 1, 320
	dec := Config{In: tile.F16, Out: tile.F32, HeadDim: 256, Decode: true}
	if ls, err := PlanSplitKV(a); err != nil || ls[0].Grid != [3]int{3, 2, 2} || ls[0].Func != dec.Name() || ls[0].Block != [3]int{64, 1, 1} ||
		ls[0].SharedBytes != 2*2*16*512+2*ExchangeBytes || ls[1].Func != (CombineConfig{HeadDim: 256, Out: tile.F32}).Name() {
		t.Errorf("d256 split launches %v, %v", ls, err)
	} else if par, err := PackParams(ls[0]); err != nil {
		t.Error(err)
	} else if got := binary.LittleEndian.Uint32(par[0xa0:]); got != 7 { // blocksPerSplit (Params)
		t.Errorf("d256 split: %d blocks a split, want 7 (20 blocks of 16 keys over 3)", got)
	}
	// the rule's edge: 16 rows decode, 17 the 64-row kernel
	a = basePlanArgs()
	for _, c := range []struct {
		seqQ, hq, hkv int
		decode        bool
	}{{4, 8, 2, true}, {5, 8, 2, false}, {16, 2, 2, true}, {17, 2, 2, false}} {
		a.SeqQ, a.HeadsQ, a.HeadsKV = c.seqQ, c.hq, c.hkv
		want := Config{In: tile.F16, Out: tile.F32, HeadDim: 128, Decode: c.decode}.Name()
		if l, err := PlanPrefill(a); err != nil || l.Func != want || (c.decode && l.Block != [3]int{32, 1, 1}) {
			t.Errorf("SeqQ %d group %d: kernel %s block %v (want %s), %v", c.seqQ, c.hq/c.hkv, l.Func, l.Block, want, err)
		}
	}
	a = basePlanArgs()
	a.Splits, a.Workspace, a.SeqQ = 4, 5<<40, 1
	ls, err := PlanSplitKV(a)
	if err != nil {
		t.Fatal(err)
	}
	if ls[0].Grid != [3]int{4, 2, 2} || ls[1].Grid != [3]int{1, 8, 2} || ls[1].Func != (CombineConfig{HeadDim: 128, Out: tile.F32}).Name() {
		t.Errorf("split launches %v %v %s", ls[0].Grid, ls[1].Grid, ls[1].Func)
	}
	for _, c := range []struct {
		name string
		mod  func(*PrefillArgs)
	}{
		{"head dim 96", func(a *PrefillArgs) { a.HeadDim = 96 }},
		{"head dim 512", func(a *PrefillArgs) { a.HeadDim = 512 }},
		{"heads not a multiple", func(a *PrefillArgs) { a.HeadsKV = 3 }},
		{"K misaligned", func(a *PrefillArgs) { a.K += 8 }},
		{"stride not a multiple of 8", func(a *PrefillArgs) { a.QStrides[1] = 129 }},
		{"zero scale", func(a *PrefillArgs) { a.Scale = 0 }},
		{"window", func(a *PrefillArgs) { a.WindowLeft = -2 }},
		{"page 8", func(a *PrefillArgs) { a.PageSize, a.SeqLensKV, a.BlockTable, a.BlocksPerSeq = 8, 6<<40, 7<<40, 4 }},
		{"page without lengths", func(a *PrefillArgs) { a.PageSize, a.BlockTable, a.BlocksPerSeq = 16, 7<<40, 4 }},
		{"splits via PlanPrefill", func(a *PrefillArgs) { a.Splits = 2 }},
		{"f32 input", func(a *PrefillArgs) { a.In = tile.F32 }},
		{"no input type", func(a *PrefillArgs) { a.In = tile.Invalid }},
		{"f64 output", func(a *PrefillArgs) { a.Out = tile.F64 }},
	} {
		a := basePlanArgs()
		c.mod(&a)
		if _, err := PlanPrefill(a); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", c.name, err)
		}
	}
	a = basePlanArgs()
	a.Splits, a.Workspace, a.CuSeqQ, a.TotalQ = 2, 5<<40, 6<<40, -1
	if _, err := PlanSplitKV(a); !errors.Is(err, ErrUnsupported) {
		t.Errorf("varlen split with TotalQ -1: %v", err)
	}
	a.TotalQ = 250 // varlen: the workspace holds TotalQ rows
	if got, want := SplitWorkspaceBytes(a), 2*250*8*128*4+2*8*250*4; got != want {
		t.Errorf("varlen workspace %d bytes, want %d", got, want)
	}
	if _, err := PlanSplitKV(a); err != nil {
		t.Errorf("varlen split: %v", err)
	}
	a = basePlanArgs()
	a.Splits, a.Workspace, a.Out = 2, 5<<40, tile.E4M3
	if _, err := PlanSplitKV(a); !errors.Is(err, ErrUnsupported) {
		t.Errorf("split into e4m3: %v", err)
	}
	a = basePlanArgs()
	a.Splits = 2 // no workspace
	if _, err := PlanSplitKV(a); !errors.Is(err, ErrUnsupported) {
		t.Errorf("split without workspace: %v", err)
	}
}

// TestPackParams: a launch packs by its kernel's parameter list (the
// combine kernel's for a combine launch), slot by slot, and a slot count
// the kernel does not take is an error.
func TestPackParams(t *testing.T) {
	a := basePlanArgs()
	a.Splits, a.Workspace, a.SeqQ = 4, 5<<40, 1
	ls, err := PlanSplitKV(a)
	if err != nil {
		t.Fatal(err)
	}
	for i, ps := range [][]cubin.Param{Params(), CombineParams()} {
		offs, size, _ := cubin.ParamLayout(ps)
		b, err := PackParams(ls[i])
		if err != nil || len(b) != size {
			t.Fatalf("launch %d: %d bytes, want %d, %v", i, len(b), size, err)
		}
		for k, p := range ps {
			want := ls[i].Params[k] & (1<<(8*p.Size) - 1)
			if got := binary.LittleEndian.Uint64(append(b[offs[k]:offs[k]+p.Size:offs[k]+p.Size], make([]byte, 8-p.Size)...)); got != want {
				t.Errorf("launch %d slot %d: %#x, want %#x", i, k, got, want)
			}
		}
		ls[i].Params = ls[i].Params[1:]
		if _, err := PackParams(ls[i]); err == nil {
			t.Errorf("launch %d: one slot short packed", i)
		}
	}
}

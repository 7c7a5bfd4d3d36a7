package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// Kernels of the nvcc corpus (sass/testdata/nvcc: CUDA C++ compiled by
// nvcc 11.8) run in the simulator, poisoning on, against Go references:
// the divergent warp collectives (BRA.DIV, BRA.CONV, WARPSYNC Rn, the
// shuffle subroutines nvcc calls when the warp may be diverged). Every
// word must decode and every instruction must be simulated: a gap fails.

// nvccKernel decodes kernel name of the nvcc corpus cubin file for
// sm_<sm>; a decoder or simulator gap fails the test.
func nvccKernel(t *testing.T, file, name string, sm int) sass.Program {
	t.Helper()
	code, _ := corpus.NVCCCode(t, file, name, sm)
	p, err := sass.Decode(code)
	if err != nil {
		t.Fatalf("nvcc %s sm_%d %s: %v", file, sm, name, err)
	}
	ks, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	for k, err := range ks.Unsupported() {
		t.Fatalf("nvcc %s sm_%d %s: simulator gap at %#x %s: %v", file, sm, name, 16*k, p[k].Text(int64(16*k)), err)
	}
	return p
}

func launchNVCC(t *testing.T, file, name string, sm int, cfg Config) {
	t.Helper()
	if _, err := Launch(nvccKernel(t, file, name, sm), cfg); err != nil {
		t.Fatalf("nvcc %s sm_%d %s: %v", file, sm, name, err)
	}
}

// TestSimNVCCDivShfl: __shfl_xor_sync(full mask) in a loop whose trip
// count the compiler cannot prove uniform (nvcc: BRA.DIV ~URZ to
// __cuda_sm70_shflsync_bfly_p, WARPSYNC 0xffffffff there). A full-mask
// shuffle is defined only when every lane of the warp takes it, so the
// trip count is random per warp and the same within one; BRA.DIV is then
// not taken. Whole warps only (an exited lane in the mask is undefined in
// CUDA, and the simulator's poisoning flags the shuffle's read of it).
func TestSimNVCCDivShfl(t *testing.T) { corpus.ForSMs(t, simNVCCDivShfl) }

func simNVCCDivShfl(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(70, 71))
	for _, n := range []int{32, 96} {
		blocks := n / 32
		x := make([]uint32, 2*n)
		ks := make([]int, blocks)
		for i := range x[:n] {
			x[i] = r.Uint32() >> r.IntN(20)
		}
		for w := range ks {
			ks[w] = r.IntN(8)
			for l := 0; l < 32; l++ {
				x[n+32*w+l] = uint32(ks[w]) | r.Uint32()<<3
			}
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(32*blocks), 0)
		launchNVCC(t, "diverge", "div_shfl", sm, Config{Grid: [3]int{blocks}, Block: [3]int{32}, Memory: m,
			Params: params(ax, ay, uint32(n)), Poison: true})
		y := simWords(m.Bytes("y"))
		for w := 0; w < blocks; w++ {
			live := min(32, n-32*w)
			v := make([]uint32, 32)
			copy(v, x[32*w:32*w+live])
			for j := 0; j < ks[w]; j++ {
				nv := make([]uint32, 32)
				for l := 0; l < live; l++ {
					src := l ^ (1 << (j & 3))
					if src >= live {
						src = l // a shuffle from an exited lane returns the lane's own value
					}
					nv[l] = v[l] + v[src]
				}
				v = nv
			}
			for l := 0; l < live; l++ {
				if y[32*w+l] != v[l] {
					t.Fatalf("n=%d: lane %d of warp %d = %#x, want %#x", n, l, w, y[32*w+l], v[l])
				}
			}
		}
	}
}

// TestSimNVCCVarMask: shuffles and __syncwarp among the lanes a ballot
// picked (VOTEU.ANY, BRA.DIV UR6, BRA.CONV UR6, WARPSYNC R3). The xor
// butterfly is defined only when every lane of the mask's partners is in
// it, so warp 0 is all odd (every lane sums the butterfly) and warp 1 all
// even (no lane enters). A mixed warp reads non-member lanes, undefined
// in CUDA: the poisoning flags it (not tested here).
func TestSimNVCCVarMask(t *testing.T) { corpus.ForSMs(t, simNVCCVarMask) }

func simNVCCVarMask(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(72, 73))
	for _, allOdd := range []bool{true} {
		const n = 64
		x := make([]uint32, n)
		for i := range x {
			x[i] = r.Uint32() >> 8
			if allOdd {
				x[i] = x[i]&^1 | uint32(1-i/32)
			}
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(n), 0)
		launchNVCC(t, "diverge", "var_mask_loop", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ay, uint32(n)), Poison: true})
		y := simWords(m.Bytes("y"))
		for w := 0; w < n/32; w++ {
			v := append([]uint32(nil), x[32*w:32*w+32]...)
			if allOdd && w == 0 {
				for o := 1; o < 32; o <<= 1 {
					nv := make([]uint32, 32)
					for l := range nv {
						nv[l] = v[l] + v[l^o]
					}
					v = nv
				}
			}
			for l := 0; l < 32; l++ {
				want := v[l]
				if !allOdd && x[32*w+l]&1 == 1 {
					continue // partial-mask butterflies read non-member lanes: undefined in CUDA
				}
				if y[32*w+l] != want {
					t.Fatalf("allOdd=%v: lane %d of warp %d = %#x, want %#x", allOdd, l, w, y[32*w+l], want)
				}
			}
		}
	}
}

// TestSimNVCCCgDiv: a cooperative-groups warp sum inside a bounds check;
// full warps only (the tile's collectives need all 32 lanes).
func TestSimNVCCCgDiv(t *testing.T) { corpus.ForSMs(t, simNVCCCgDiv) }

func simNVCCCgDiv(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(74, 75))
	for _, n := range []int{32, 96} {
		x := make([]uint32, n)
		for i := range x {
			x[i] = r.Uint32()
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n/32), 0)
		launchNVCC(t, "diverge", "cg_div", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao, uint32(n)), Poison: true})
		out := simWords(m.Bytes("out"))
		for w := 0; w < n/32; w++ {
			var s uint32
			for _, v := range x[32*w : 32*w+32] {
				s += v
			}
			if out[w] != s {
				t.Fatalf("n=%d: warp %d sum %#x, want %#x", n, w, out[w], s)
			}
		}
	}
}

// TestSimNVCCVecAdd: nvcc's vec_add on sizes that are no multiple of the block.
func TestSimNVCCVecAdd(t *testing.T) { corpus.ForSMs(t, simNVCCVecAdd) }

func simNVCCVecAdd(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(76, 77))
	for _, n := range []int{1, 7, 129, 1000} {
		a, b := make([]uint32, n), make([]uint32, n)
		for i := range a {
			a[i], b[i] = math.Float32bits(r.Float32()*8-4), math.Float32bits(r.Float32()*8-4)
		}
		m := NewMemory()
		pa, pb, pc := alloc(t, m, "a", a, 0), alloc(t, m, "b", b, 0), alloc(t, m, "c", poisonWords(n+32), 0)
		launchNVCC(t, "arith", "vec_add", sm, Config{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Memory: m,
			Params: params(pa, pb, pc, uint32(n)), Poison: true})
		c := simWords(m.Bytes("c"))
		for i := 0; i < n; i++ {
			if want := math.Float32bits(math.Float32frombits(a[i]) + math.Float32frombits(b[i])); c[i] != want {
				t.Fatalf("n=%d: c[%d] = %#x, want %#x", n, i, c[i], want)
			}
		}
		checkPoison(t, fmt.Sprint("vec_add n=", n), c, n)
	}
}

// TestSimNVCCConstLut: __constant__ data in bank 3 and a __device__
// global whose address the code gets through relocations (UMOV UR4,
// 32@lo(counter); R_CUDA_ABS32_LO_32/HI_32), applied by cubin.Relocate
// with the global's address in the simulator's memory. y[i] = lut[x[i]&15]
// + lut[i&15], and thread 0 adds n to the counter.
func TestSimNVCCConstLut(t *testing.T) { corpus.ForSMs(t, simNVCCConstLut) }

func simNVCCConstLut(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(78, 79))
	_, raw := corpus.NVCCCode(t, "call", "const_lut", sm)
	f, err := cubin.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	var lutOff uint64
	found := false
	for _, s := range f.Symbols {
		if s.Name == "lut" {
			lutOff, found = s.Value, true
		}
	}
	bank3 := f.Section(".nv.constant3")
	if !found || bank3 == nil {
		t.Fatal("no lut in .nv.constant3")
	}
	for _, n := range []int{1, 7, 129, 1000} {
		lut := make([]uint32, 16)
		for i := range lut {
			lut[i] = r.Uint32()
		}
		bank := make([]byte, bank3.Size)
		putU32s(bank[lutOff:], lut)
		x := make([]uint32, n)
		for i := range x {
			x[i] = r.Uint32()
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(n), 0)
		start := r.Uint32()
		actr := alloc(t, m, "counter", []uint32{start}, 0)
		code, err := f.Relocate("const_lut", func(sym string) (uint64, bool) { return actr, sym == "counter" })
		if err != nil {
			t.Fatal(err)
		}
		p, err := sass.Decode(code)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Launch(p, Config{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Memory: m, Params: params(ax, ay, uint32(n)),
			Banks: map[uint8][]byte{3: bank}, Poison: true}); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		y := simWords(m.Bytes("y"))
		for i := range x {
			if want := lut[x[i]&15] + lut[i&15]; y[i] != want {
				t.Fatalf("n=%d: y[%d] = %#x, want %#x", n, i, y[i], want)
			}
		}
		if got := simWords(m.Bytes("counter"))[0]; got != start+uint32(n) {
			t.Fatalf("n=%d: counter %#x, want %#x", n, got, start+uint32(n))
		}
	}
	// Without the global's address the cubin is refused, naming the relocation.
	if _, err := f.Relocate("const_lut", func(string) (uint64, bool) { return 0, false }); !errors.Is(err, cubin.ErrRelocation) ||
		!strings.Contains(err.Error(), "R_CUDA_ABS32_") || !strings.Contains(err.Error(), "counter") {
		t.Fatalf("Relocate without an address: %v", err)
	}
}

// nvccBank3 returns a copy of the cubin's .nv.constant3 with each named
// symbol's words replaced.
func nvccBank3(t *testing.T, file string, sm int, vals map[string][]uint32) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(corpus.NVCCDir, "cubin", fmt.Sprintf("%s.sm_%d.cubin", file, sm)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := cubin.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".nv.constant3")
	if s == nil {
		t.Fatal("no .nv.constant3")
	}
	bank := make([]byte, s.Size)
	for name, v := range vals {
		found := false
		for _, sym := range f.Symbols {
			if sym.Name == name {
				putU32s(bank[sym.Value:], v)
				found = true
			}
		}
		if !found {
			t.Fatalf("no symbol %s", name)
		}
	}
	return bank
}

// TestSimNVCCCallPoly: a __noinline__ device function (CALL.REL.NOINC,
// RET.REL.NODEC) evaluating a degree-7 polynomial from __constant__ coef
// by FFMA (Horner, bit for bit in float32 with Go's math.FMA) plus an
// indexed __constant__ lut (LDC c[0x3][R+0x20]).
func TestSimNVCCCallPoly(t *testing.T) { corpus.ForSMs(t, simNVCCCallPoly) }

func simNVCCCallPoly(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(80, 81))
	for _, n := range []int{1, 7, 129, 1000} {
		coef, lut := make([]uint32, 8), make([]uint32, 16)
		for i := range coef {
			coef[i] = math.Float32bits(r.Float32()*2 - 1)
		}
		for i := range lut {
			lut[i] = uint32(r.IntN(2001) - 1000)
		}
		bank := nvccBank3(t, "call", sm, map[string][]uint32{"coef": coef, "lut": lut})
		x := make([]uint32, n)
		for i := range x {
			x[i] = math.Float32bits(r.Float32()*4 - 2)
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(n), 0)
		launchNVCC(t, "call", "call_poly", sm, Config{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Memory: m,
			Params: params(ax, ay, uint32(n)), Banks: map[uint8][]byte{3: bank}, Poison: true})
		y := simWords(m.Bytes("y"))
		for i := range x {
			xv := math.Float32frombits(x[i])
			var p float32
			for j := 7; j >= 0; j-- {
				p = float32(math.FMA(float64(p), float64(xv), float64(math.Float32frombits(coef[j]))))
			}
			want := math.Float32bits(p + float32(int32(lut[i&15])))
			if y[i] != want {
				t.Fatalf("n=%d: y[%d] = %#x, want %#x", n, i, y[i], want)
			}
		}
	}
}

// TestSimNVCCDivision: nvcc's int32 / and % (the IABS, I2F.RP, MUFU.RCP
// reciprocal sequence), float division through FCHK and its slow-path
// subroutine.
// Bit for bit against Go (IEEE division, the float sum order of the
// kernel).
func TestSimNVCCDivision(t *testing.T) { corpus.ForSMs(t, simNVCCDivision) }

func simNVCCDivision(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(82, 83))
	for _, n := range []int{1, 7, 129, 1000} {
		a, b := make([]uint32, n), make([]uint32, n)
		for i := range a {
			a[i] = r.Uint32() >> r.IntN(31)
			b[i] = (r.Uint32() >> r.IntN(31)) | 1
			if r.IntN(2) == 0 {
				a[i] = -a[i]
			}
			if r.IntN(3) == 0 {
				b[i] = -b[i]
			}
		}
		if n > 3 {
			a[0], b[0] = 0x80000000, 0xffffffff // INT_MIN / -1: nvcc's sequence gives INT_MIN, % 0
		}
		m := NewMemory()
		pa, pb := alloc(t, m, "a", a, 0), alloc(t, m, "b", b, 0)
		pq, pr := alloc(t, m, "q", poisonWords(n), 0), alloc(t, m, "r", poisonWords(n), 0)
		launchNVCC(t, "arith", "divmod_i32", sm, Config{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Memory: m,
			Params: params(pa, pb, pq, pr, uint32(n)), Poison: true})
		q, rm := simWords(m.Bytes("q")), simWords(m.Bytes("r"))
		for i := range a {
			x, y := int32(a[i]), int32(b[i])
			wq, wr := x, int32(0)
			if !(x == math.MinInt32 && y == -1) {
				wq, wr = x/y, x%y
			}
			if int32(q[i]) != wq || int32(rm[i]) != wr {
				t.Fatalf("n=%d: %d / %d = %d r %d, want %d r %d", n, x, y, int32(q[i]), int32(rm[i]), wq, wr)
			}
		}

		fa, fb := make([]uint32, n), make([]uint32, n)
		for i := range fa {
			fa[i] = math.Float32bits(float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(200)-100))))
			fb[i] = math.Float32bits(float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(200)-100))))
		}
		m = NewMemory()
		pa, pb = alloc(t, m, "a", fa, 0), alloc(t, m, "b", fb, 0)
		pc := alloc(t, m, "c", poisonWords(n), 0)
		launchNVCC(t, "arith", "fdiv_vec", sm, Config{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Memory: m,
			Params: params(pa, pb, pc, uint32(n)), Poison: true})
		c := simWords(m.Bytes("c"))
		for i := range fa {
			x, y := math.Float32frombits(fa[i]), math.Float32frombits(fb[i])
			s := float32(math.Sqrt(float64(float32(math.Abs(float64(x))))))
			want := math.Float32bits(x/y + s)
			if c[i] != want && !(math.IsNaN(float64(x/y+s)) && c[i] == 0x7fffffff) {
				t.Fatalf("n=%d: %g / %g + sqrt = %#x, want %#x", n, x, y, c[i], want)
			}
		}
	}
}

// TestSimNVCCLocal: local memory: a run-time indexed local array
// (local_array, exact integers) and a kernel spilling under
// -maxrregcount=32 (spill_poly: STL.128, LDL.LU.128; its float sums are
// contracted into FFMAs by nvcc in an order the reference does not copy,
// so it is compared within 1e-5 relative to the sum of magnitudes).
func TestSimNVCCLocal(t *testing.T) { corpus.ForSMs(t, simNVCCLocal) }

func simNVCCLocal(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(84, 85))
	for _, n := range []int{1, 7, 129} {
		x := make([]uint32, n)
		for i := range x {
			x[i] = r.Uint32()
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(n), 0)
		launchNVCC(t, "spill", "local_array", sm, Config{Grid: [3]int{(n + 63) / 64}, Block: [3]int{64}, Memory: m,
			Params: params(ax, ay, uint32(n)), Poison: true})
		y := simWords(m.Bytes("y"))
		for i := range x {
			var h [64]int32
			for k := range h {
				h[k] = int32(k * i)
			}
			for k := 0; k < 16; k++ {
				h[x[(i+k)%n]&63] += int32(k)
			}
			var s int64
			for k := range h {
				s += int64(h[k]) * int64(k+1)
			}
			if want := uint32(int32(s ^ (s >> 32))); y[i] != want {
				t.Fatalf("local_array n=%d: y[%d] = %#x, want %#x", n, i, y[i], want)
			}
		}

		fx := make([]uint32, n)
		for i := range fx {
			fx[i] = math.Float32bits(r.Float32()*2 - 1)
		}
		m = NewMemory()
		ax, ay = alloc(t, m, "x", fx, 0), alloc(t, m, "y", poisonWords(n), 0)
		launchNVCC(t, "spill", "spill_poly", sm, Config{Grid: [3]int{(n + 63) / 64}, Block: [3]int{64}, Memory: m,
			Params: params(ax, ay, uint32(n)), Poison: true})
		y = simWords(m.Bytes("y"))
		for i := range fx {
			var a [48]float64
			for k := range a {
				a[k] = float64(math.Float32frombits(fx[(i+k*37)%n])) * float64(k+1)
			}
			var s, mag float64
			for rr := 0; rr < 4; rr++ {
				for k := 0; k < 48; k++ {
					p := a[k] * a[(k+rr+1)%48]
					s = s*0.5 + p
					mag = mag*0.5 + math.Abs(p)
				}
			}
			got := float64(math.Float32frombits(y[i]))
			if math.Abs(got-s) > 1e-5*mag+1e-30 {
				t.Fatalf("spill_poly n=%d: y[%d] = %g, want %g (bound %g)", n, i, got, s, 1e-5*mag)
			}
		}
	}
}

// TestSimVoteuNoDest: VOTEU.ALL UP0, P0 (nvdisasm's form for a URZ
// destination) sets the uniform predicate: USEL picks 1 or 2 into every
// lane's output; all lanes true, then one lane false.
func TestSimVoteuNoDest(t *testing.T) {
	p, err := sass.Parse(`S2R R0, SR_TID.X ;
ISETP.NE.AND P0, PT, R0, c[0x0][0x168], PT ;
VOTEU.ALL UP0, P0 ;
IMAD.SHL.U32 R2, R0, 0x4, RZ ;
UMOV UR5, 0x1 ;
UMOV UR6, 0x2 ;
USEL UR4, UR5, UR6, UP0 ;
MOV R3, UR4 ;
IADD3 R2, P1, R2, c[0x0][0x160], RZ ;
IADD3.X R5, RZ, c[0x0][0x164], RZ, P1, !PT ;
IMAD.MOV.U32 R4, RZ, RZ, R2 ;
STG.E [R4.64], R3 ;
EXIT ;`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ skip, want uint32 }{{99, 1}, {5, 2}} {
		m := NewMemory()
		ao := alloc(t, m, "out", poisonWords(32), 0)
		if _, err := Launch(p, Config{Block: [3]int{32}, Memory: m, Params: params(ao, c.skip), Poison: true}); err != nil {
			t.Fatal(err)
		}
		for l, v := range simWords(m.Bytes("out")) {
			if v != c.want {
				t.Fatalf("skip lane %d: lane %d = %d, want %d", c.skip, l, v, c.want)
			}
		}
	}
}

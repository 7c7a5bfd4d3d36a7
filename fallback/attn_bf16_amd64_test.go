//go:build amd64 && !purego

package fallback

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

// TestAttnBF16Encoding checks the instructions attn_bf16_gen.go spells as
// bytes (VDPBF16PS, VCVTNE2PS2BF16: the Go assembler lacks them) against
// the system assembler: each BYTE line's comment is assembled with GNU as
// and disassembled with objdump, and the bytes must be the same. It is
// skipped where as or objdump is missing; CI has both (gcc).
func TestAttnBF16Encoding(t *testing.T) {
	as, err1 := exec.LookPath("as")
	objdump, err2 := exec.LookPath("objdump")
	if err1 != nil || err2 != nil {
		t.Skip("needs GNU as and objdump")
	}
	src, err := os.ReadFile("attn_bf16_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^\s*((?:BYTE \$0x[0-9a-f]{2}; )*BYTE \$0x[0-9a-f]{2}) // (.*)$`)
	var want, texts []string
	for _, l := range strings.Split(string(src), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			want = append(want, strings.ReplaceAll(strings.ReplaceAll(m[1], "BYTE $0x", ""), ";", ""))
			texts = append(texts, m[2])
		}
	}
	// The 8×2 and 8×1 gemm tiles, the one conversion and the decode
	// kernel's 4×4 tile.
	if len(want) != 8*2+8+1+4*4 {
		t.Fatalf("found %d encoded instructions, want 41", len(want))
	}
	dir := t.TempDir()
	in, obj := filepath.Join(dir, "in.s"), filepath.Join(dir, "in.o")
	if err := os.WriteFile(in, []byte(strings.Join(texts, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "--64", "-o", obj, in).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	out, err := exec.Command(objdump, "-d", obj).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	dis := regexp.MustCompile(`^\s*[0-9a-f]+:\t([0-9a-f ]+?)\s*\t`)
	var got []string
	for _, l := range bytes.Split(out, []byte("\n")) {
		if m := dis.FindSubmatch(l); m != nil {
			got = append(got, string(m[1]))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("objdump shows %d instructions, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: written as %s, GNU as writes %s", texts[i], want[i], got[i])
		}
	}
}

// TestAttnBF16Kernels checks the bf16 pair kernels against Go on random
// bf16 operands, strides, column counts and scales: the pair packers bit
// for bit (round to nearest even), the gemm against a float64 sum of the
// same exact products (only the f32 accumulation order differs).
func TestAttnBF16Kernels(t *testing.T) {
	if !cpufeat.Supports(attnBF16Features...) {
		t.Skip("the CPU (or TCRT_CPU) lacks AVX512_BF16")
	}
	k := findAttnVariant("avx512bf16")
	rng := rand.New(rand.NewPCG(21, rand.Uint64()))
	bf := func(n int) []uint16 {
		v := make([]uint16, n)
		for i := range v {
			v[i] = tile.F32ToBF16(rng.Float32()*2 - 1)
		}
		return v
	}
	f := func(u uint16) float64 { return float64(math.Float32frombits(uint32(u) << 16)) }
	for trial := 0; trial < 200; trial++ {
		n := 16 * (1 + rng.IntN(8))
		r0, r1 := bf(n), bf(n)
		dst := make([]uint32, n+1)
		dst[n] = 0xdeadbeef
		k.pairsBF16(&dst[0], &r0[0], &r1[0], n)
		for i := 0; i < n; i++ {
			if dst[i] != uint32(r0[i])|uint32(r1[i])<<16 {
				t.Fatalf("pairsBF16 n=%d: [%d] = %#x, want %#x", n, i, dst[i], uint32(r0[i])|uint32(r1[i])<<16)
			}
		}
		f0, f1 := make([]float32, n), make([]float32, n)
		for i := range f0 {
			f0[i] = (rng.Float32()*2 - 1) * float32(math.Ldexp(1, rng.IntN(40)-20))
			f1[i] = (rng.Float32()*2 - 1) * float32(math.Ldexp(1, rng.IntN(40)-20))
		}
		k.pairsF32BF16(&dst[0], &f0[0], &f1[0], n)
		for i := 0; i < n; i++ {
			if w := uint32(tile.F32ToBF16(f0[i])) | uint32(tile.F32ToBF16(f1[i]))<<16; dst[i] != w {
				t.Fatalf("pairsF32BF16 n=%d: [%d] = %#x, want %#x (%v, %v)", n, i, dst[i], w, f0[i], f1[i])
			}
		}
		if dst[n] != 0xdeadbeef {
			t.Fatalf("pairs n=%d wrote past n", n)
		}
		// The decode logits against qk4Go on the same bf16 values widened.
		{
			d, nk := 32*(1+rng.IntN(4)), 4*(1+rng.IntN(5))
			ldk, ldq := 2*(d+2*rng.IntN(9)), d+2*rng.IntN(9)
			kb, q := bf(nk*ldk/2), bf(4*ldq)
			qf := make([]float32, 4*ldq)
			for i, u := range q {
				qf[i] = float32(f(u))
			}
			sc := rng.Float32() + 0.5
			got, want := make([]float32, 4*nk+1), make([]float32, 4*nk)
			got[4*nk] = 7
			k.qk4BF16(&got[0], (*byte)(unsafe.Pointer(&kb[0])), ldk, &q[0], ldq, d, nk, 0, sc)
			qk4Go(tile.BF16)(&want[0], (*byte)(unsafe.Pointer(&kb[0])), ldk, &qf[0], ldq, d, nk, 0)
			for i := range want {
				if w := sc * want[i]; math.Abs(float64(got[i]-w)) > 1e-6*float64(d) {
					t.Fatalf("qk4BF16 d=%d nk=%d: s[%d] = %v, want %v", d, nk, i, got[i], w)
				}
			}
			if got[4*nk] != 7 {
				t.Fatalf("qk4BF16 nk=%d wrote past s", nk)
			}
		}
		// gemm: A rows r at byte r·rsa, pairs k at k·csa.
		nc := 1 + rng.IntN(32)
		kp := rng.IntN(70)
		rsa, csa := 4*(kp+rng.IntN(3)), 4
		if rng.IntN(2) == 0 {
			rsa, csa = 4, 4*(8+rng.IntN(5))
		}
		ldb, ldc := nc+rng.IntN(9), nc+rng.IntN(9)
		a := bf((8*rsa+kp*csa)/2 + 2)
		b := bf(2 * (kp*ldb + 32))
		c0 := make([]float32, 8*ldc+32)
		for i := range c0 {
			c0[i] = rng.Float32()*2 - 1
		}
		scale := []float32{0.5, -1, 2, 0.25, 1, 3, -0.5, 0}
		mul := rng.Float32() + 0.5
		for _, sp := range []*float32{nil, &scale[0]} {
			got := append([]float32(nil), c0...)
			k.gemmBF16(&got[0], ldc, (*byte)(unsafe.Pointer(&a[0])), rsa, csa, (*uint32)(unsafe.Pointer(&b[0])), ldb, kp, nc, sp, mul)
			for r := 0; r < 8; r++ {
				for j := 0; j < ldc; j++ {
					i := r*ldc + j
					want := float64(c0[i])
					if j < nc {
						var acc float64
						for q := 0; q < kp; q++ {
							ai := (r*rsa + q*csa) / 2
							bi := 2 * (q*ldb + j)
							acc += f(a[ai])*f(b[bi]) + f(a[ai+1])*f(b[bi+1])
						}
						want = float64(mul) * acc
						if sp != nil {
							want += float64(scale[r]) * float64(c0[i])
						}
					}
					if math.Abs(float64(got[i])-want) > 1e-6*float64(2*kp+2) {
						t.Fatalf("gemmBF16 nc=%d kp=%d scale=%v: C[%d][%d] = %v, want %v", nc, kp, sp != nil, r, j, got[i], want)
					}
				}
			}
			if got[8*ldc] != c0[8*ldc] {
				t.Fatalf("gemmBF16 nc=%d wrote past its rows", nc)
			}
		}
	}
}

// TestAttentionBF16Pairs runs the bf16 prefill (VDPBF16PS for Q·Kᵀ and
// P·V) against the float64 reference with an f32 output, on shapes that
// fit no tile, and holds it to the tolerance its numerics give: P rounded
// to bf16 is off by ≤ 2⁻⁹ relative per weight, so the output by about
// 2⁻⁹·max|V| (|V| ≤ 1 here), and the f32 path on the same inputs must be
// closer still.
func TestAttentionBF16Pairs(t *testing.T) {
	if !cpufeat.Supports(attnBF16Features...) {
		t.Skip("the CPU (or TCRT_CPU) lacks AVX512_BF16")
	}
	rng := rand.New(rand.NewPCG(22, rand.Uint64()))
	for _, c := range []fbCase{
		{1, 4, 4, 64, 17, 17, false, -1, -1, 0, tile.BF16, 0},
		{2, 8, 2, 128, 33, 100, true, -1, -1, 0, tile.BF16, 0},
		{1, 2, 1, 16, 129, 129, true, -1, -1, 0, tile.BF16, 0},
		{1, 2, 2, 48, 7, 1000, false, 100, 3, 30, tile.BF16, 2},
		{1, 4, 2, 256, 65, 63, true, -1, -1, 0, tile.BF16, 0},
		{1, 1, 1, 128, 200, 200, true, -1, -1, 0, tile.BF16, 3},
		{1, 8, 2, 128, 1, 1001, false, -1, -1, 0, tile.BF16, 0}, // decode
		{2, 4, 1, 64, 1, 77, true, -1, -1, 20, tile.BF16, 2},    // decode
	} {
		a := &AttentionArgs{Batch: c.batch, HeadsQ: c.hq, HeadsKV: c.hkv, HeadDim: c.d, SeqQ: c.sq, SeqKV: c.skv,
			Q: randTensor(rng, c.dt, c.batch, c.sq, c.hq, c.d), K: randTensor(rng, c.dt, c.batch, c.skv, c.hkv, c.d),
			V: randTensor(rng, c.dt, c.batch, c.skv, c.hkv, c.d), O: randTensor(rng, tile.F32, c.batch, c.sq, c.hq, c.d),
			Scale: float32(1 / math.Sqrt(float64(c.d))), SoftCap: c.softcap, Causal: c.causal,
			WindowLeft: c.left, WindowRight: c.right, Splits: c.splits, Threads: 2}
		ref := *a
		ref.O.Data = make([]byte, len(a.O.Data))
		AttentionRef(&ref)
		f32 := *a
		f32.O.Data = make([]byte, len(a.O.Data))
		poisonBytes(f32.O.Data)
		if err := AttentionFast("avx512", &f32); err != nil {
			t.Fatal(err)
		}
		poisonBytes(a.O.Data)
		if err := AttentionFast("avx512bf16", a); err != nil {
			t.Fatal(err)
		}
		e := compareOut(tile.F32, a.O.Data, ref.O.Data)
		ef := compareOut(tile.F32, f32.O.Data, ref.O.Data)
		// Decode items (≤ 4 rows, d a multiple of 64) round nothing: only
		// their logits take VDPBF16PS.
		decode := c.sq*c.hq/c.hkv <= 4 && c.d%64 == 0
		if decode && (e > 1e-5 || ef > 1e-5) {
			t.Errorf("%v: decode error %.3g, f32 path %.3g (bound 1e-5)", c, e, ef)
		}
		if !decode && (e > 0x1p-8 || ef > 1e-5 || !(e > ef)) {
			t.Errorf("%v: bf16 pair path error %.3g (bound 2^-8), f32 path %.3g", c, e, ef)
		}
		t.Logf("%v: bf16 pairs %.3g, f32 %.3g", c, e, ef)
	}
}

// TestAttnBF16Subnormals pins down the flushing the bf16 path's numerics
// rely on (attnRun.bf16): VDPBF16PS treats a subnormal bf16 input as 0
// even where its product would be a normal f32, and VCVTNE2PS2BF16 turns a
// subnormal f32 into a (signed) zero, not the nearest bf16.
func TestAttnBF16Subnormals(t *testing.T) {
	if !cpufeat.Supports(attnBF16Features...) {
		t.Skip("the CPU (or TCRT_CPU) lacks AVX512_BF16")
	}
	k := findAttnVariant("avx512bf16")
	// A: the pair (2^-133 subnormal, 1); B: the pair (2^100, 0.5). Exact:
	// 2^-33 + 0.5; flushed: 0.5.
	sub, one := uint16(0x0001), tile.F32ToBF16(1)
	a := make([]uint32, 8)
	for i := range a {
		a[i] = uint32(sub) | uint32(one)<<16
	}
	b := make([]uint32, 16)
	for i := range b {
		b[i] = uint32(tile.F32ToBF16(0x1p100)) | uint32(tile.F32ToBF16(0.5))<<16
	}
	c := make([]float32, 8*16)
	k.gemmBF16(&c[0], 16, (*byte)(unsafe.Pointer(&a[0])), 4, 32, &b[0], 16, 1, 16, nil, 1)
	for i, v := range c {
		if v != 0.5 {
			t.Fatalf("VDPBF16PS of a subnormal input: C[%d] = %g, want 0.5 (flushed; exact %g)", i, v, 0.5+0x1p-33)
		}
	}
	r0 := make([]float32, 16)
	r1 := make([]float32, 16)
	for i := range r0 {
		r0[i] = math.Float32frombits(0x00400000) // 2^-127, subnormal
		r1[i] = -math.Float32frombits(0x00000001)
	}
	dst := make([]uint32, 16)
	k.pairsF32BF16(&dst[0], &r0[0], &r1[0], 16)
	for i, v := range dst {
		if v != 0x8000_0000 {
			t.Fatalf("VCVTNE2PS2BF16 of subnormals: [%d] = %#x, want 0x80000000 (+0, −0)", i, v)
		}
	}
}

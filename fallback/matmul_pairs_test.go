package fallback

import (
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// TestMatMulBF16Pairs runs bf16 and float8 operands, which the BF16Pairs
// variants pack in pairs of K values, with every variant that takes them
// against MatMulRef: odd K (a zero-padded last pair), shapes not multiple of
// any tile, both layouts of each operand (the transposing and the
// interleaving pack, and the word view of bf16 rows next to the decoded
// copy that odd leading dimensions need), alpha, beta, scales, small cache
// blocks and batches.
func TestMatMulBF16Pairs(t *testing.T) {
	r := newRand(t)
	pairs := 0
	for _, v := range MatMulVariants() {
		if v.BF16Pairs && v.Available() {
			pairs++
		}
	}
	if pairs == 0 {
		t.Log("no BF16Pairs variant on this CPU: only the others run")
	}
	bf := mat{dt: tile.BF16}
	for _, s := range [][3]int{{1, 1, 1}, {7, 129, 7}, {129, 7, 129}, {15, 33, 64}, {29, 65, 33}, {1, 1000, 1}, {3, 40, 1000}} {
		for _, tr := range [][2]bool{{false, false}, {true, true}, {false, true}, {true, false}} {
			if testing.Short() && s[0]*s[1]*s[2] > 130000 && tr != [2]bool{} {
				continue
			}
			c := f32Case(s[0], s[1], s[2])
			c.A, c.B = bf, bf
			c.A.trans, c.B.trans = tr[0], tr[1]
			check(t, r, c)
		}
	}
	// Odd leading dimensions and a 2-byte skew: rows that do not start
	// on a 4-byte boundary take the copying pack.
	for _, pad := range []mat{{dt: tile.BF16, ldPad: 1, bsPad: 3}, {dt: tile.BF16, ldPad: 2, skew: 2}} {
		c := f32Case(31, 70, 45)
		c.Batch = 2
		c.A, c.B = pad, pad
		c.B.trans = true
		c.Alpha, c.Beta, c.Bias, c.Act = -0.75, 0.5, true, ActGELU
		check(t, r, c)
	}
	// float8 with per-tensor and per-row/column scales, mixed with bf16.
	for _, d8 := range []tile.DType{tile.E4M3, tile.E5M2} {
		for _, tr := range []bool{false, true} {
			c := f32Case(23, 67, 51)
			c.A.dt, c.B.dt = d8, d8
			c.A.trans, c.B.trans = tr, !tr
			c.ScaleA, c.ScaleB = []float32{0.25}, []float32{3}
			check(t, r, c)
			c.ScaleA = make([]float32, c.M)
			for i := range c.ScaleA {
				c.ScaleA[i] = randUnit(r) * randUnit(r)
			}
			c.ScaleB = make([]float32, c.N)
			for j := range c.ScaleB {
				c.ScaleB[j] = 1 + randUnit(r)
			}
			c.Alpha, c.D.dt = 1.5, tile.BF16
			check(t, r, c)
			c = f32Case(9, 40, 77)
			c.A.dt, c.B = d8, bf
			c.ScaleA = []float32{0.5}
			check(t, r, c)
		}
	}
	defer func() { testBlocking = nil }()
	for _, blk := range []blocking{{kc: 16, mc: 28, nc: 64}, {kc: 6, mc: 14, nc: 32}} {
		testBlocking = &blk
		for _, threads := range []int{1, 3} {
			c := f32Case(61, 83, 51)
			c.A, c.B = bf, bf
			c.A.trans = threads == 3
			c.Threads, c.Beta, c.Bias = threads, 0.5, true
			check(t, r, c)
			c.D.dt, c.InPlace = tile.BF16, false
			check(t, r, c)
		}
		c := f32Case(40, 70, 45)
		c.A, c.B = bf, bf
		c.Batch, c.InPlace, c.Beta, c.Alpha = 2, true, 1, 2
		check(t, r, c)
	}
}

// TestMatMulBF16PairsRejects checks that a BF16Pairs variant refuses
// operands it would have to round.
func TestMatMulBF16PairsRejects(t *testing.T) {
	for _, v := range MatMulVariants() {
		if !v.BF16Pairs || !v.Available() {
			continue
		}
		for _, dt := range []tile.DType{tile.F32, tile.F16} {
			a := MatMulArgs{M: 1, N: 1, K: 1, Batch: 1, A: Matrix{DType: dt}, B: Matrix{DType: tile.BF16}}
			if err := MatMulFast(v.Name, &a); err == nil {
				t.Errorf("%s with %v·bf16: no error", v.Name, dt)
			}
		}
	}
}

// TestFP8ToBF16 checks the vector float8 decoders against the tables bit
// for bit (NaNs: NaN with the same sign), for all 256 codes at every
// position of a vector and with tails.
func TestFP8ToBF16(t *testing.T) {
	if fp8ToBF16Fast == nil {
		t.Skip("no vector decoder in this build")
	}
	for _, d := range []tile.DType{tile.E4M3, tile.E5M2} {
		table := &e4m3BF16
		if d == tile.E5M2 {
			table = &e5m2BF16
		}
		for _, n := range []int{16, 17, 256 + 15, 1000} {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i*7 + n)
			}
			dst := make([]uint16, n)
			for i := range dst {
				dst[i] = 0xdead
			}
			done := fp8ToBF16Fast(d, dst, src)
			if done != n&^15 && done != 0 {
				t.Fatalf("%v n=%d: decoded %d", d, n, done)
			}
			for i := range done {
				got, want := dst[i], table[src[i]]
				nan := func(b uint16) bool { return b&0x7f80 == 0x7f80 && b&0x7f != 0 }
				if got != want && !(nan(got) && nan(want) && got>>15 == want>>15) {
					t.Fatalf("%v %#02x: bf16 %#04x, want %#04x", d, src[i], got, want)
				}
			}
			for i := done; i < n; i++ {
				if dst[i] != 0xdead {
					t.Fatalf("%v n=%d: wrote element %d past the %d decoded", d, n, i, done)
				}
			}
		}
	}
}

// TestMatMulBF16PairsSubnormals pins down the documented numerics of the
// dot-product instruction: a subnormal bf16 input counts as zero (the f32
// path multiplies it exactly).
func TestMatMulBF16PairsSubnormals(t *testing.T) {
	for _, v := range MatMulVariants() {
		if !v.BF16Pairs || !v.Available() {
			continue
		}
		a := MatMulArgs{M: 1, N: 1, K: 2, Batch: 1, Alpha: 1}
		a.A = Matrix{DType: tile.BF16, Data: make([]byte, 4), Rows: 1, Cols: 2, LD: 2, BatchStride: 2}
		a.B = Matrix{DType: tile.BF16, Data: make([]byte, 4), Rows: 2, Cols: 1, LD: 1, BatchStride: 2}
		a.D = Matrix{DType: tile.F32, Data: make([]byte, 4), Rows: 1, Cols: 1, LD: 1, BatchStride: 1}
		storeF32(tile.BF16, a.A.Data, 0, 0x1p-127) // subnormal in bf16
		storeF32(tile.BF16, a.A.Data, 1, 0)
		storeF32(tile.BF16, a.B.Data, 0, 0x1p100)
		storeF32(tile.BF16, a.B.Data, 1, 0)
		poison(a.D.Data)
		if err := MatMulFast(v.Name, &a); err != nil {
			t.Fatal(err)
		}
		if got := loadF32(tile.F32, a.D.Data, 0); got != 0 {
			t.Errorf("%s: 2^-127·2^100 = %g, want 0 (the subnormal read as zero)", v.Name, got)
		}
		if err := MatMulFast("avx512", &a); err == nil {
			if got := loadF32(tile.F32, a.D.Data, 0); got != 0x1p-27 {
				t.Errorf("avx512: 2^-127·2^100 = %g, want 2^-27", got)
			}
		}
	}
}

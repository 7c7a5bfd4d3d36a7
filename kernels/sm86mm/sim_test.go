package sm86mm

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/tile"
)

var long = flag.Bool("sm86mm.long", false, "run the full M x N x K sweep in the simulator")

const poisonF32 = 0x7fbadbad // a NaN the kernel never produces

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// simCase runs the kernel for one shape in the simulator (poison mode) and
// returns the largest error relative to max(|ref|, 1) against the float64
// reference; it fails on any fault, any poisoned output left or any
// padding written.
func simCase(t *testing.T, s *sass.Sim, c Config, M, N, K int, alpha float32, rng *rand.Rand) float64 {
	t.Helper()
	lda := roundUp(K, 8) + 8
	ldb := roundUp(N, 8) + 8
	ldd := N + 3
	dt := tile.F16
	enc := tile.F32ToF16
	nan := uint16(0x7e00)
	if c.In == BF16 {
		dt, enc, nan = tile.BF16, tile.F32ToBF16, 0x7fc0
	}
	a := make([]byte, 2*M*lda)
	b := make([]byte, 2*K*ldb)
	fill := func(buf []byte, rows, cols, ld int) {
		for i := 0; i < rows; i++ {
			for j := 0; j < ld; j++ {
				v := nan // padding: NaN, so a read of it shows
				if j < cols {
					v = enc(float32(rng.Float64()*2 - 1))
				}
				binary.LittleEndian.PutUint16(buf[2*(i*ld+j):], v)
			}
		}
	}
	fill(a, M, K, lda)
	fill(b, K, N, ldb)
	d := make([]byte, 4*M*ldd)
	for k := 0; k < len(d); k += 4 {
		binary.LittleEndian.PutUint32(d[k:], poisonF32)
	}
	mem := sass.NewMemory()
	const aBase, bBase, dBase = 0x10000000000, 0x20000000000, 0x30000000000
	for _, r := range []struct {
		n    string
		base uint64
		data []byte
	}{{"A", aBase, a}, {"B", bBase, b}, {"D", dBase, d}} {
		if err := mem.Map(r.n, r.base, r.data); err != nil {
			t.Fatal(err)
		}
	}
	var par []byte
	par = binary.LittleEndian.AppendUint64(par, dBase)
	par = binary.LittleEndian.AppendUint64(par, aBase)
	par = binary.LittleEndian.AppendUint64(par, bBase)
	for _, v := range []int{M, N, K, lda, ldb, ldd} {
		par = binary.LittleEndian.AppendUint32(par, uint32(v))
	}
	par = binary.LittleEndian.AppendUint32(par, math.Float32bits(alpha))
	_, err := s.Launch(sass.SimConfig{
		Grid:        [3]int{(N + TileN - 1) / TileN, (M + TileM - 1) / TileM, 1},
		Block:       [3]int{Threads, 1, 1},
		SharedBytes: SharedBytes,
		Params:      par,
		Memory:      mem,
		Poison:      true,
	})
	if err != nil {
		t.Fatalf("%s M=%d N=%d K=%d: %v", c.Name(), M, N, K, err)
	}
	ref := make([]byte, 4*M*N)
	fallback.MatMulRef(&fallback.MatMulArgs{
		M: M, N: N, K: K, Batch: 1,
		A:     fallback.Matrix{DType: dt, Data: a, Rows: M, Cols: K, LD: lda},
		B:     fallback.Matrix{DType: dt, Data: b, Rows: K, Cols: N, LD: ldb},
		D:     fallback.Matrix{DType: tile.F32, Data: ref, Rows: M, Cols: N, LD: N},
		Alpha: alpha,
	})
	worst := 0.0
	for i := 0; i < M; i++ {
		for j := 0; j < ldd; j++ {
			bits := binary.LittleEndian.Uint32(d[4*(i*ldd+j):])
			if j >= N {
				if bits != poisonF32 {
					t.Fatalf("%s M=%d N=%d K=%d: padding D[%d][%d] written", c.Name(), M, N, K, i, j)
				}
				continue
			}
			if bits == poisonF32 {
				t.Fatalf("%s M=%d N=%d K=%d: D[%d][%d] not written", c.Name(), M, N, K, i, j)
			}
			got := float64(math.Float32frombits(bits))
			want := float64(math.Float32frombits(binary.LittleEndian.Uint32(ref[4*(i*N+j):])))
			e := math.Abs(got-want) / math.Max(math.Abs(want), 1)
			if math.IsNaN(got) {
				e = math.Inf(1)
			}
			if e > worst {
				worst = e
			}
		}
	}
	return worst
}

type shape struct{ M, N, K int }

// ciShapes is the representative subset: every tail kind (M, N below,
// at and above a tile; K one copy chunk, a partial K tile, several tiles
// so that the 4-stage ring wraps).
var ciShapes = []shape{
	{1, 1, 8}, {17, 8, 64}, {128, 128, 32}, {129, 127, 40}, {64, 256, 256}, {8, 17, 320}, {256, 129, 136},
}

func fullShapes() []shape {
	dims := []int{1, 8, 17, 64, 127, 128, 129, 256, 320}
	ks := []int{8, 64, 128, 256, 320} // the kernel requires K % 8 == 0
	var out []shape
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range ks {
				out = append(out, shape{m, n, k})
			}
		}
	}
	return out
}

func TestSimMatchesReference(t *testing.T) {
	shapes := ciShapes
	if *long {
		shapes = fullShapes()
	}
	for _, c := range variants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sass.NewSim(p.Insts)
		if err != nil {
			t.Fatal(err)
		}
		if u := s.Unsupported(); len(u) > 0 {
			t.Fatalf("simulator cannot run: %v", u)
		}
		tol := 1e-3
		if c.In == BF16 {
			tol = 1e-2
		}
		rng := rand.New(rand.NewSource(1))
		worst := 0.0
		for _, sh := range shapes {
			alpha := float32(1)
			if sh.M%2 == 1 {
				alpha = -0.75
			}
			e := simCase(t, s, c, sh.M, sh.N, sh.K, alpha, rng)
			if e > tol {
				t.Errorf("%s M=%d N=%d K=%d: max rel err %.3g > %.g", c.Name(), sh.M, sh.N, sh.K, e, tol)
			}
			worst = math.Max(worst, e)
		}
		t.Logf("%s: %d shapes, max rel err %.3g", c.Name(), len(shapes), worst)
	}
}

var _ = fmt.Sprint

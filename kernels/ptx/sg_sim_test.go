package ptx

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	sasssim "github.com/tcrt-go/tcrt/sass/sim"
)

// simKernel decodes kernel name of module m's embedded sm_86 or sm_89
// cubin for the simulator, which must be able to run every instruction of
// it, and returns it with the kernel's own constant banks (ptxas's bank 2).
func simKernel(t *testing.T, m *backend.Module, name string, sm int) (*sasssim.Simulator, map[uint8][]byte) {
	t.Helper()
	c, err := cubin.Read(m.Cubins[sm])
	if err != nil {
		t.Fatal(err)
	}
	s := c.Section(".text." + name)
	if s == nil {
		t.Fatalf("no kernel %s", name)
	}
	p, err := sass.Decode(s.Data)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := sasssim.New(p)
	if err != nil {
		t.Fatal(err)
	}
	if u := sim.Unsupported(); len(u) > 0 {
		t.Fatalf("%s: the simulator cannot run %v", name, u)
	}
	banks := map[uint8][]byte{}
	for n := uint8(1); n < 18; n++ {
		if b := c.Section(fmt.Sprintf(".nv.constant%d.%s", n, name)); b != nil {
			banks[n] = b.Data
		}
	}
	return sim, banks
}

// sgParams lays out parameters at their natural alignment (uint64 or
// uint32 values), as the kernels' .param lists declare them.
func sgParams(vals ...any) []byte {
	var b []byte
	for _, v := range vals {
		switch x := v.(type) {
		case uint64:
			for len(b)%8 != 0 {
				b = append(b, 0)
			}
			b = binary.LittleEndian.AppendUint64(b, x)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, x)
		default:
			panic(fmt.Sprint("sgParams: ", v))
		}
	}
	return b
}

// TestSGSimRunsEveryKernel: every kernel of both SG cubins decodes and has
// no instruction the simulator cannot run (the simulated device's rule for
// loading the module).
func TestSGSimRunsEveryKernel(t *testing.T) {
	for _, sm := range []int{86, 89} {
		for _, k := range []string{SGCheckIndex, SGCheckDisp, SGGatherRows, SGGatherElems, SGScatter, SGGatherCAS, SGFillPad} {
			simKernel(t, SG(), k, sm)
		}
	}
}

// TestSGSimCheckIndex runs ptxas's tcrt_sg_check_index (sm_86 and sm_89)
// in the simulator on random index tiles of every index type, strided, with
// the grid SGGrid picks for a 2-SM device, and compares the slot with the
// contract: ^l for the first faulting lane l in row-major order, 0 when
// every index is in [0, n).
func TestSGSimCheckIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(50, 51))
	for _, sm := range []int{86, 89} {
		sim, banks := simKernel(t, SG(), SGCheckIndex, sm)
		for _, sh := range [][2]int{{1, 1}, {7, 3}, {129, 1}, {3, 300}, {40, 33}} {
			for it := uint32(0); it < 4; it++ {
				rows, cols := sh[0], sh[1]
				size := 4 << (it / 2)
				n := uint64(1 + r.IntN(1000))
				isc, isr := uint64(size), uint64(size*(cols+r.IntN(3)))
				raw := make([]byte, int(isr)*rows)
				for i := range raw {
					raw[i] = byte(r.Uint32())
				}
				first := -1
				for l := 0; l < rows*cols; l++ {
					v := uint64(r.IntN(int(n)))
					if r.IntN(200) == 0 {
						v = n + uint64(r.IntN(5)) // past the end
						if it%2 == 0 {
							v = uint64(-1 - int64(r.IntN(5))) // negative
						}
					}
					off := (l/cols)*int(isr) + (l%cols)*int(isc)
					for k := 0; k < size; k++ {
						raw[off+k] = byte(v >> (8 * k))
					}
					if first < 0 && v >= n {
						first = l
					}
				}
				m := sasssim.NewMemory()
				as, _ := m.Alloc("slot", 8)
				ai, _ := m.Alloc("idx", len(raw))
				copy(m.Bytes("idx"), raw)
				lg := SGLog2Threads(int64(cols))
				gx, gy := SGGrid(int64(rows), int64(cols), lg, 2)
				_, err := sim.Launch(sasssim.Config{Grid: [3]int{gx, gy}, Block: [3]int{SGBlock}, Memory: m, Banks: banks,
					Params: sgParams(as, ai, it, isr, isc, uint64(rows), uint64(cols), lg, n)})
				if err != nil {
					t.Fatalf("sm_%d %dx%d itype %d: %v", sm, rows, cols, it, err)
				}
				want := uint64(0)
				if first >= 0 {
					want = ^uint64(first)
				}
				if got := binary.LittleEndian.Uint64(m.Bytes("slot")); got != want {
					t.Fatalf("sm_%d %dx%d itype %d n %d: slot %#x, want %#x (first faulting lane %d)", sm, rows, cols, it, n, got, want, first)
				}
			}
		}
	}
}

// TestSGSimFillPad runs tcrt_sg_fill_pad in the simulator: every physical
// element outside the valid region gets the pattern, the valid region and
// the bytes between strided rows keep their poison; with a non-zero slot
// (a preflight fault) nothing is written.
func TestSGSimFillPad(t *testing.T) {
	r := rand.New(rand.NewPCG(52, 53))
	for _, sm := range []int{86, 89} {
		sim, banks := simKernel(t, SG(), SGFillPad, sm)
		for _, sh := range [][4]int{{1, 1, 1, 1}, {7, 9, 5, 9}, {33, 130, 32, 129}, {8, 4, 1, 1}} {
			for elog := uint32(0); elog < 4; elog++ {
				for _, fault := range []bool{false, true} {
					prows, pcols, vrows, vcols := sh[0], sh[1], sh[2], sh[3]
					es := 1 << elog
					dsc := uint64(es)
					dsr := uint64(es * (pcols + r.IntN(3)))
					pat := r.Uint64()
					m := sasssim.NewMemory()
					as, _ := m.Alloc("slot", 8)
					ad, _ := m.Alloc("dst", int(dsr)*prows)
					dst := m.Bytes("dst")
					for i := range dst {
						dst[i] = 0xa5
					}
					if fault {
						binary.LittleEndian.PutUint64(m.Bytes("slot"), ^uint64(3))
					}
					lg := SGLog2Threads(int64(pcols))
					gx, gy := SGGrid(int64(prows), int64(pcols), lg, 2)
					_, err := sim.Launch(sasssim.Config{Grid: [3]int{gx, gy}, Block: [3]int{SGBlock}, Memory: m, Banks: banks,
						Params: sgParams(as, ad, uint64(prows), uint64(pcols), uint64(vrows), uint64(vcols), lg, elog, dsr, dsc, pat)})
					if err != nil {
						t.Fatalf("sm_%d %v elog %d: %v", sm, sh, elog, err)
					}
					for i, b := range dst {
						row, col := i/int(dsr), i%int(dsr)/es
						want := byte(0xa5)
						if !fault && col < pcols && (row >= vrows || col >= vcols) {
							want = byte(pat >> (8 * (i % es)))
						}
						if b != want {
							t.Fatalf("sm_%d %v elog %d fault %v: byte %d (row %d col %d) = %#x, want %#x", sm, sh, elog, fault, i, row, col, b, want)
						}
					}
				}
			}
		}
	}
}

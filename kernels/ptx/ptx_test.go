package ptx

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
)

// TestPTXAssembles runs ptxas on every module for the four targets CI
// checks.
func TestPTXAssembles(t *testing.T) {
	as := cudatools.Require(t, "ptxas")
	dir := t.TempDir()
	for _, m := range Modules() {
		src := filepath.Join(dir, m.Name+".ptx")
		if err := os.WriteFile(src, m.PTX, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sm := range []string{"sm_80", "sm_86", "sm_89", "sm_90"} {
			out, err := exec.Command(as, "-arch="+sm, src, "-o", filepath.Join(dir, m.Name+"."+sm+".cubin")).CombinedOutput()
			if err != nil {
				t.Errorf("ptxas -arch=%s %s.ptx: %v\n%s", sm, m.Name, err, out)
			}
		}
	}
}

// TestCubinsCurrent checks the embedded cubins are what gen.sh makes from
// the embedded PTX today.
func TestCubinsCurrent(t *testing.T) {
	as := cudatools.Require(t, "ptxas")
	dir := t.TempDir()
	for _, m := range Modules() {
		src := filepath.Join(dir, m.Name+".ptx")
		if err := os.WriteFile(src, m.PTX, 0o644); err != nil {
			t.Fatal(err)
		}
		for sm, want := range m.Cubins {
			out := filepath.Join(dir, "c.cubin")
			if msg, err := exec.Command(as, "-arch=sm_"+itoa(sm), "-O3", src, "-o", out).CombinedOutput(); err != nil {
				t.Fatalf("ptxas: %v\n%s", err, msg)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s sm_%d: the embedded cubin is stale; run go generate ./kernels/ptx", m.Name, sm)
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestF8Grid(t *testing.T) {
	for _, c := range []struct {
		rows, cols int64
		perRow     bool
		sms, want  int
	}{
		{1, 1, false, 132, 1}, {1, 1024, false, 132, 1}, {1, 1025, false, 132, 2},
		{1 << 20, 1024, false, 132, 8 * 132}, {7, 5, true, 132, 7}, {1 << 20, 8, true, 132, 32 * 132},
		{3, 3, false, 0, 1},
	} {
		if got := F8Grid(c.rows, c.cols, c.perRow, c.sms); got != c.want {
			t.Errorf("F8Grid(%d, %d, %v, %d) = %d, want %d", c.rows, c.cols, c.perRow, c.sms, got, c.want)
		}
	}
}

func TestParams(t *testing.T) {
	if F32(1) != 0x3F800000 || I32(-1) != 0xFFFFFFFF || I64(-1) != ^uint64(0) || U32(7) != 7 || Ptr(1<<40) != 1<<40 || U64(3) != 3 {
		t.Fatal("parameter slots")
	}
}

// TestHostileSGGrid: SGGrid gives a grid of at least one block each way
// for any rows, units, log2 threads a row and SM count, without dividing
// by zero.
func TestHostileSGGrid(t *testing.T) {
	for _, rows := range []int64{math.MinInt64, -1, 0, 1, 1 << 40, math.MaxInt64} {
		for _, lg := range []uint32{0, 5, 8, 9, 31, 63, 64, math.MaxUint32} {
			for _, sms := range []int{-1, 0, 84} {
				x, y := SGGrid(rows, rows, lg, sms)
				if x < 1 || y < 1 || x > math.MaxInt32 || y > 65535 {
					t.Errorf("SGGrid(%d, %d, %d, %d) = %d, %d", rows, rows, lg, sms, x, y)
				}
			}
		}
	}
}

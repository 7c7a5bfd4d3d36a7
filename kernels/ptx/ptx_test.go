package ptx

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/tile"
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

func TestSelect(t *testing.T) {
	m := F8()
	for _, c := range []struct {
		sm   int
		kind ImageKind
		img  int
	}{
		{80, KindPTX, 80}, {86, KindCubin, 86}, {87, KindCubin, 86}, {89, KindCubin, 89},
		{90, KindPTX, 80}, {100, KindPTX, 80}, {120, KindPTX, 80},
	} {
		img, err := m.Select(c.sm)
		if err != nil {
			t.Errorf("sm_%d: %v", c.sm, err)
			continue
		}
		if img.Kind != c.kind || img.SM != c.img || len(img.Data) == 0 || img.Reason == "" {
			t.Errorf("sm_%d: %s sm_%d (%q), want %s sm_%d", c.sm, img.Kind, img.SM, img.Reason, c.kind, c.img)
		}
	}
	if _, err := m.Select(75); !errors.Is(err, tile.ErrUnsupported) {
		t.Errorf("sm_75: %v, want ErrUnsupported", err)
	}
	cubinOnly := &Module{Name: "x", Cubins: map[int][]byte{86: {1}}}
	if _, err := cubinOnly.Select(90); !errors.Is(err, tile.ErrUnsupported) {
		t.Errorf("cubin-only on sm_90: %v, want ErrUnsupported", err)
	}
	for _, c := range []struct {
		cubin, dev int
		ok         bool
	}{{86, 86, true}, {86, 89, true}, {89, 86, false}, {86, 90, false}, {80, 86, true}, {90, 89, false}} {
		if got := CubinRuns(c.cubin, c.dev); got != c.ok {
			t.Errorf("CubinRuns(%d, %d) = %v", c.cubin, c.dev, got)
		}
	}
}

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

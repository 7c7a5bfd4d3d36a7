package gen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/internal/sasscheck"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/sched"
)

func programs(t *testing.T, arch int) map[string]sass.Program {
	t.Helper()
	ps, err := Programs(arch)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestOracle checks every instruction word of every kernel: nvdisasm
// -b SM86 (SM89 for the sm_89 module) prints exactly the model's text
// (sasscheck.Oracle: one nvdisasm run per architecture, each distinct word
// once).
func TestOracle(t *testing.T) {
	for _, arch := range sm86.Archs {
		progs := programs(t, arch)
		names := make([]string, 0, len(progs))
		for name := range progs {
			names = append(names, name)
		}
		sort.Strings(names)
		var list []sasscheck.Program
		for _, name := range names {
			if _, err := sass.Encode(progs[name]); errors.Is(err, sass.ErrNoForm) {
				t.Logf("%s sm_%d: not encodable by the model yet: %v", name, arch, err)
				continue
			}
			list = append(list, sasscheck.Program{Name: name, Insts: progs[name]})
		}
		sasscheck.Oracle(t, arch, list)
	}
}

// TestSchedule runs the schedule checker on every kernel: no findings.
func TestSchedule(t *testing.T) {
	for _, arch := range sm86.Archs {
		for name, p := range programs(t, arch) {
			if _, err := sass.Encode(p); errors.Is(err, sass.ErrNoForm) {
				t.Logf("%s sm_%d: not encodable by the model yet, not checked: %v", name, arch, err)
				continue
			}
			for _, f := range sched.Check(p, sched.Options{Strict: true}) {
				t.Errorf("%s sm_%d: %s", name, arch, f)
			}
		}
	}
}

// TestCubinsCurrent fails when an embedded cubin differs from what the
// generators produce now (run go generate ./kernels/sm86).
func TestCubinsCurrent(t *testing.T) {
	for _, arch := range sm86.Archs {
		want, err := Cubin(arch)
		if errors.Is(err, sm86.ErrNotEncodable) {
			if sm86.Embedded(arch) != nil {
				t.Errorf("sm_%d: a cubin is embedded but the generators cannot build it: %v", arch, err)
			}
			if _, ok := sm86.Module().Cubins[arch]; ok {
				t.Errorf("sm_%d: sm86.Module lists a cubin it cannot have", arch)
			}
			t.Logf("sm_%d: no cubin (%v)", arch, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sm86.Embedded(arch), want) {
			t.Errorf("sm_%d: the embedded cubin is stale; run go generate ./kernels/sm86", arch)
		}
		if got := sm86.Module().Cubins[arch]; !bytes.Equal(got, want) {
			t.Errorf("sm_%d: sm86.Module's cubin differs from the embedded one", arch)
		}
	}
}

// TestCubinTools reads the embedded cubins back with cuobjdump -elf and
// nvdisasm: every kernel is there, with the code the generators produce.
func TestCubinTools(t *testing.T) {
	cuobjdump, nvdisasm := cudatools.Require(t, "cuobjdump"), cudatools.Require(t, "nvdisasm")
	dir := t.TempDir()
	for _, arch := range sm86.Archs {
		if sm86.Embedded(arch) == nil {
			t.Logf("sm_%d: no cubin embedded", arch)
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("sass.sm_%d.cubin", arch))
		if err := os.WriteFile(path, sm86.Embedded(arch), 0o644); err != nil {
			t.Fatal(err)
		}
		elf, err := exec.Command(cuobjdump, "-elf", path).CombinedOutput()
		if err != nil {
			t.Fatalf("cuobjdump -elf sm_%d: %v\n%s", arch, err, elf)
		}
		dis, err := exec.Command(nvdisasm, "-hex", path).CombinedOutput()
		if err != nil {
			t.Fatalf("nvdisasm sm_%d: %v\n%s", arch, err, dis)
		}
		for name, p := range programs(t, arch) {
			if !bytes.Contains(elf, []byte(".text."+name)) {
				t.Errorf("sm_%d: cuobjdump -elf shows no .text.%s", arch, name)
			}
			if !bytes.Contains(dis, []byte(".text."+name)) {
				t.Errorf("sm_%d: nvdisasm shows no .text.%s", arch, name)
			}
			for k, i := range p[:8] {
				if want := i.Text(int64(16 * k)); !bytes.Contains(dis, []byte(want)) {
					t.Errorf("sm_%d %s: nvdisasm of the cubin lacks %q", arch, name, want)
				}
			}
		}
	}
}

func TestDivMagic(t *testing.T) {
	ds := []uint32{1, 2, 3, 5, 7, 10, 100, 127, 128, 129, 1000, 4095, 4097, 65535, 1 << 20, 1<<20 + 1, 1<<30 - 1, 1 << 30, 1<<31 - 1}
	ls := []uint32{0, 1, 2, 3, 1000, 65535, 1 << 20, 1<<31 - 1, 1<<31 - 2, 1 << 30, 123456789}
	seed := uint64(1)
	next := func() uint32 { seed = seed*6364136223846793005 + 1442695040888963407; return uint32(seed >> 33) }
	for range 200 {
		ds = append(ds, next()|1)
		ls = append(ls, next())
	}
	for _, d := range ds {
		if d == 0 || d >= 1<<31 {
			continue
		}
		m, s := sm86.DivMagic(d)
		for _, l := range append(ls, d-1, d, d+1, 2*d-1, 2*d) {
			if l >= 1<<31 {
				continue
			}
			hi := uint32(uint64(l) * uint64(m) >> 32)
			if got := (hi + l) >> s; got != l/d {
				t.Fatalf("DivMagic(%d) = %d, %d: %d / %d gives %d, want %d", d, m, s, l, d, got, l/d)
			}
		}
	}
}

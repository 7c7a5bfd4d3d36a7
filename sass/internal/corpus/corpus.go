// Package corpus gives the tests of the sass packages (the instruction
// model, the simulator and the scheduling tools) one view of the ptxas
// corpus in sass/testdata: paths that do not depend on the test's working
// directory, the corpus's cubins, their code sections and their golden
// nvdisasm text. It does not import the instruction model, so that the
// model's own tests can use it.
package corpus

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
)

// root is the repository's root directory.
var root = func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}()

// Repo returns the path of a file or directory of the repository, rel
// being relative to its root ("kernels/ptx/cubin").
func Repo(rel ...string) string { return filepath.Join(append([]string{root}, rel...)...) }

// Path returns the path of rel under sass/testdata ("ptxas", "cubin",
// "sched/var.ptx").
func Path(rel ...string) string { return Repo(append([]string{"sass", "testdata"}, rel...)...) }

// Dir is the ptxas corpus: its PTX, cubin/ and golden/.
var Dir = Path("ptxas")

// Archs are the targets every corpus source is compiled for.
var Archs = []int{86, 89}

// Cubin is a ptxas-built cubin and the golden text file of its words.
type Cubin struct{ Path, Golden string }

// Cubins lists every ptxas-built cubin of the repository that the
// coverage tests read: the corpus's and those kernels/ptx embeds.
func Cubins(t testing.TB) []Cubin {
	var out []Cubin
	for _, g := range []struct{ glob, prefix string }{
		{filepath.Join(Dir, "cubin", "*.cubin"), ""},
		{Repo("kernels", "ptx", "cubin", "*.cubin"), "kptx_"},
	} {
		fs, err := filepath.Glob(g.glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			base := g.prefix + strings.TrimSuffix(filepath.Base(f), ".cubin")
			out = append(out, Cubin{f, filepath.Join(Dir, "golden", base+".txt")})
		}
	}
	return out
}

// A cubin is read here by a few lines over its ELF64 headers, not by the
// cubin package under test (so that the cubin package's own tests can use
// this one) nor by debug/elf (which reads NVIDIA's section flags as
// compression and refuses some cubins).

// Arch returns the SASS architecture of a cubin (86 or 89): the low byte
// of its ELF flags.
func Arch(t testing.TB, b []byte) int {
	if len(b) < 64 || string(b[:4]) != "\x7fELF" {
		t.Fatal("not an ELF file")
	}
	return int(binary.LittleEndian.Uint32(b[0x30:]) & 0xff)
}

// Section is a code section of a cubin.
type Section struct {
	Name string
	Data []byte
}

// TextSections returns the code sections (.text.*, PROGBITS) of a cubin in
// file order.
func TextSections(t testing.TB, b []byte) []Section {
	le := binary.LittleEndian
	if len(b) < 64 || string(b[:4]) != "\x7fELF" || b[4] != 2 {
		t.Fatal("not an ELF64 file")
	}
	shoff, shentsize, shnum, shstrndx := le.Uint64(b[0x28:]), uint64(le.Uint16(b[0x3a:])), uint64(le.Uint16(b[0x3c:])), uint64(le.Uint16(b[0x3e:]))
	hdr := func(k uint64) []byte {
		o := shoff + k*shentsize
		if shentsize < 64 || o < shoff || o+64 > uint64(len(b)) {
			t.Fatalf("section header %d outside the file", k)
		}
		return b[o : o+64]
	}
	body := func(h []byte) []byte {
		off, size := le.Uint64(h[24:]), le.Uint64(h[32:])
		if off+size < off || off+size > uint64(len(b)) {
			t.Fatal("section outside the file")
		}
		return b[off : off+size]
	}
	strs := body(hdr(shstrndx))
	var out []Section
	for k := uint64(0); k < shnum; k++ {
		h := hdr(k)
		n := uint64(le.Uint32(h))
		if n >= uint64(len(strs)) {
			t.Fatalf("section %d: name outside the string table", k)
		}
		name := string(strs[n:])
		if e := strings.IndexByte(name, 0); e >= 0 {
			name = name[:e]
		}
		if strings.HasPrefix(name, ".text.") && le.Uint32(h[4:]) == 1 { // SHT_PROGBITS
			out = append(out, Section{name, body(h)})
		}
	}
	return out
}

// Code returns the code of kernel name in the corpus cubin file for
// sm_<sm>.
func Code(t testing.TB, file, name string, sm int) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir, "cubin", fmt.Sprintf("%s.sm_%d.cubin", file, sm)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range TextSections(t, b) {
		if s.Name == ".text."+name {
			return s.Data
		}
	}
	t.Fatalf("%s sm_%d: no kernel %s", file, sm, name)
	return nil
}

// ForSMs runs f as a subtest for each corpus architecture.
func ForSMs(t *testing.T, f func(t *testing.T, sm int)) {
	for _, sm := range Archs {
		t.Run(fmt.Sprint("sm_", sm), func(t *testing.T) { f(t, sm) })
	}
}

// TrimTail drops the NOP and BRA padding ptxas puts after a kernel's last
// instruction.
func TrimTail(code []byte) []byte {
	n := len(code) / 16
	for n > 0 {
		w := code[16*(n-1) : 16*n]
		op := binary.LittleEndian.Uint16(w) & 0xfff
		if op == 0x918 || op == 0x947 { // NOP, BRA
			n--
			continue
		}
		break
	}
	return code[:16*n]
}

// Ptxas118 reports whether the ptxas found is release 11.8, whose output
// the golden files hold (the test is skipped without ptxas, failed under
// CI=true).
func Ptxas118(t *testing.T) bool {
	out := cudatools.Run(t, cudatools.Require(t, "ptxas"), "--version")
	return strings.Contains(out, "release 11.8")
}

// NVCCDir is the nvcc corpus: CUDA C++ kernels (*.cu), their cubins for
// each of Archs (cubin/) and every code word with nvdisasm's text
// (golden/). gen.sh rebuilds it.
var NVCCDir = Path("nvcc")

// NVCCCubins lists the nvcc corpus's cubins and their golden files.
func NVCCCubins(t testing.TB) []Cubin {
	fs, err := filepath.Glob(filepath.Join(NVCCDir, "cubin", "*.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Cubin
	for _, f := range fs {
		base := strings.TrimSuffix(filepath.Base(f), ".cubin")
		out = append(out, Cubin{f, filepath.Join(NVCCDir, "golden", base+".txt")})
	}
	return out
}

// NVCCCode returns the code of kernel name (its symbol: the corpus's
// kernels are extern "C") in the nvcc corpus cubin of file for sm_<sm>,
// and the whole cubin.
func NVCCCode(t testing.TB, file, name string, sm int) (code, cubin []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(NVCCDir, "cubin", fmt.Sprintf("%s.sm_%d.cubin", file, sm)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range TextSections(t, b) {
		if s.Name == ".text."+name {
			return s.Data, b
		}
	}
	t.Fatalf("nvcc %s sm_%d: no kernel %s", file, sm, name)
	return nil, nil
}

package cubin

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// TestRelocate applies nvcc's R_CUDA_ABS32_LO_32/HI_32 relocations of a
// __device__ global (call.cu's const_lut: UMOV UR4, 32@lo(counter) and
// UMOV UR5, 32@hi(counter)) and checks the two immediates and that no
// other byte changed; it refuses ptxas's R_CUDA_ABS47_34 (a CALL.ABS to
// vprintf) naming it, and a nil File.
func TestRelocate(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(corpus.NVCCDir, "cubin", "call.sm_86.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := f.Relocations("const_lut")
	if err != nil || len(rs) != 2 {
		t.Fatalf("relocations %v, %v; want 2", rs, err)
	}
	const addr = 0x7f12_3456_789a
	code, err := f.Relocate("const_lut", func(s string) (uint64, bool) { return addr, s == "counter" })
	if err != nil {
		t.Fatal(err)
	}
	orig := f.Section(".text.const_lut").Data
	changed := map[uint64]bool{}
	for _, r := range rs {
		got := binary.LittleEndian.Uint64(code[r.Offset:]) >> 32
		want := uint64(addr & 0xffffffff)
		if RelocName(r.Type) == "R_CUDA_ABS32_HI_32" {
			want = addr >> 32
		}
		if got != want {
			t.Errorf("%s at %#x: immediate %#x, want %#x", RelocName(r.Type), r.Offset, got, want)
		}
		changed[r.Offset/16] = true
	}
	for k := 0; k < len(orig)/16; k++ {
		if !changed[uint64(k)] && string(orig[16*k:16*k+16]) != string(code[16*k:16*k+16]) {
			t.Errorf("word %#x changed", 16*k)
		}
	}
	if string(orig) == string(code) {
		t.Error("Relocate changed nothing")
	}

	raw, err = os.ReadFile(filepath.Join(corpus.Dir, "cubin", "tail2_sync.sm_86.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	if f, err = Read(raw); err != nil {
		t.Fatal(err)
	}
	_, err = f.Relocate("trace", func(string) (uint64, bool) { return 0x1000, true })
	if !errors.Is(err, ErrRelocation) || !strings.Contains(err.Error(), "R_CUDA_ABS47_34") {
		t.Errorf("Relocate(trace) = %v, want ErrRelocation naming R_CUDA_ABS47_34", err)
	}
	var nf *File
	if _, err := nf.Relocate("x", nil); !errors.Is(err, ErrFormat) {
		t.Errorf("nil File: %v", err)
	}
}

// TestRelocateSection applies nvcc's R_CUDA_G64 of a __constant__
// pointer to a __device__ global (reloc.cu: cp = &g[1], addend 4): the
// bank's first 8 bytes become g's address plus 4, no other byte changes;
// a missing section and a nil File are errors.
func TestRelocateSection(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(corpus.NVCCDir, "cubin", "reloc.sm_86.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	const addr = 0x7f12_3456_7890
	bank, err := f.RelocateSection(".nv.constant3", func(s string) (uint64, bool) { return addr, s == "g" })
	if err != nil {
		t.Fatal(err)
	}
	orig := f.Section(".nv.constant3").Data
	if len(bank) != len(orig) || binary.LittleEndian.Uint64(bank) != addr+4 || string(bank[8:]) != string(orig[8:]) {
		t.Fatalf("relocated bank % x, from % x", bank, orig)
	}
	if _, err := f.RelocateSection(".nv.constant9", func(string) (uint64, bool) { return 0, true }); !errors.Is(err, ErrFormat) {
		t.Errorf("a missing section: %v, want ErrFormat", err)
	}
	var nf *File
	if _, err := nf.RelocateSection(".nv.constant3", nil); !errors.Is(err, ErrFormat) {
		t.Errorf("nil File: %v, want ErrFormat", err)
	}
}

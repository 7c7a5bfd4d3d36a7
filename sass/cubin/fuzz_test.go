package cubin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// FuzzReadCubin feeds Read mutated cubins (seeded with the project's
// kernels and truncations of them): it must return a cubin or an error,
// never panic, and what it returns must be safe to inspect.
func FuzzReadCubin(f *testing.F) {
	paths, _ := filepath.Glob(corpus.Repo("kernels", "*", "cubin", "*.cubin"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:64])
	}
	f.Add([]byte{})
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Read(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("Read error %v does not wrap ErrFormat", err)
			}
			if c != nil {
				t.Fatalf("Read returned both a cubin and the error %v", err)
			}
			return
		}
		_ = c.String()
		for i := -1; i <= len(c.Sections)+1; i++ {
			_ = c.SectionName(i)
		}
		for i := -1; i <= len(c.Symbols)+1; i++ {
			_ = c.SymbolName(i)
		}
		for _, s := range c.Sections {
			_ = c.Section(s.Name)
		}
		for _, k := range c.Kernels {
			if s := c.Section(".text." + k.Kernel.Name); s != nil {
				_, _ = sass.Decode(s.Data)
			}
		}
		addr := func(string) (uint64, bool) { return 0x1000, true }
		for _, s := range c.Sections {
			if _, err := c.SectionRelocations(s.Name); err != nil && !errors.Is(err, ErrFormat) {
				t.Fatalf("SectionRelocations(%q): %v does not wrap ErrFormat", s.Name, err)
			}
			if _, err := c.RelocateSection(s.Name, addr); err != nil && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrRelocation) {
				t.Fatalf("RelocateSection(%q): %v wraps neither ErrFormat nor ErrRelocation", s.Name, err)
			}
		}
		for _, name := range c.KernelNames() {
			if _, err := c.Relocate(name, addr); err != nil && !errors.Is(err, ErrFormat) && !errors.Is(err, ErrRelocation) {
				t.Fatalf("Relocate(%q): %v wraps neither ErrFormat nor ErrRelocation", name, err)
			}
		}
	})
}

// FuzzParseInfo feeds ParseInfo mutated .nv.info sections (seeded with
// those of the project's kernels): it must return records or an error
// wrapping ErrFormat, never panic, and every record it returns must be safe
// to inspect (String, U32s, Symbol, ParseKParamInfo) and encode back.
func FuzzParseInfo(f *testing.F) {
	paths, _ := filepath.Glob(corpus.Repo("kernels", "*", "cubin", "*.cubin"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		c, err := Read(b)
		if err != nil {
			continue // a ptxas cubin Read refuses: FuzzReadCubin seeds it
		}
		for _, s := range c.Sections {
			if strings.HasPrefix(s.Name, ".nv.info") {
				f.Add(s.Data)
				f.Add(s.Data[:len(s.Data)/2+1])
			}
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0x04, 0x17, 0xff, 0xff})
	f.Add([]byte{0x04, 0x17, 0x08, 0x00, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := ParseInfo(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("ParseInfo error %v does not wrap ErrFormat", err)
			}
			return
		}
		for _, r := range recs {
			_ = r.String()
			_ = r.U32s()
			if r.HasSymbol() {
				_ = r.Symbol()
			}
			if r.Attr == AttrKParamInfo {
				if _, err := ParseKParamInfo(r); err != nil && !errors.Is(err, ErrFormat) {
					t.Fatalf("ParseKParamInfo error %v does not wrap ErrFormat", err)
				}
			}
		}
		if again, err := ParseInfo(EncodeInfo(recs)); err != nil || len(again) != len(recs) {
			t.Fatalf("re-encoded records parse to %d records, %v; want %d", len(again), err, len(recs))
		}
	})
}

// TestHostileFile: a nil *File's accessors return zero values or an error
// wrapping ErrFormat, and relocating any section of a hostile cubin fails
// with ErrFormat or ErrRelocation rather than panicking.
func TestHostileFile(t *testing.T) {
	var c *File
	if c.Section(".text") != nil || c.SectionName(1) != "" || c.SymbolName(0) != "" || c.KernelNames() != nil || c.String() == "" {
		t.Error("a nil File's accessors do not return zero values")
	}
	for name, err := range map[string]error{
		"Relocations":        func() error { _, err := c.Relocations("k"); return err }(),
		"SectionRelocations": func() error { _, err := c.SectionRelocations(".text.k"); return err }(),
		"Relocate":           func() error { _, err := c.Relocate("k", nil); return err }(),
		"RelocateSection":    func() error { _, err := c.RelocateSection(".nv.constant0", nil); return err }(),
	} {
		if !errors.Is(err, ErrFormat) {
			t.Errorf("nil File: %s: %v; want ErrFormat", name, err)
		}
	}
}

package cubin

import (
	"errors"
	"os"
	"path/filepath"
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
	})
}

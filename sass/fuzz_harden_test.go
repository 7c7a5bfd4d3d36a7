package sass

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadCubin feeds ReadCubin mutated cubins (seeded with the project's
// kernels and truncations of them): it must return a cubin or an error,
// never panic, and what it returns must be safe to inspect.
func FuzzReadCubin(f *testing.F) {
	paths, _ := filepath.Glob("../kernels/*/cubin/*.cubin")
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
		c, err := ReadCubin(b)
		if err != nil {
			if c != nil {
				t.Fatalf("ReadCubin returned both a cubin and the error %v", err)
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
				_, _ = Decode(s.Data)
			}
		}
	})
}

// FuzzParse feeds the SASS text parser arbitrary programs (seeded with the
// golden listings): it must never panic, and what it accepts must print to a
// listing that parses back to the same listing.
func FuzzParse(f *testing.F) {
	lines := readGolden(f, "testdata/golden_sm86.txt")
	for i, g := range lines {
		if i%7 == 0 {
			f.Add(g.text)
		}
	}
	var sb strings.Builder
	for _, g := range lines[:min(len(lines), 40)] {
		sb.WriteString(g.text + "\n")
	}
	f.Add(sb.String())
	f.Add("/*0000*/ NOP ;\n// comment\n\n# hash\n")
	f.Add("@!P0 BRA `(.L_1) ;")
	f.Add("IMAD R0, R1, R2, -R3 ;")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Parse(text)
		if err != nil {
			return
		}
		l := p.Listing()
		q, err := Parse(l)
		if err != nil {
			t.Fatalf("Parse(%q) succeeded, but its listing %q does not parse: %v", text, l, err)
		}
		if l2 := q.Listing(); l2 != l {
			t.Fatalf("listing of %q is not stable:\n%s\nthen\n%s", text, l, l2)
		}
	})
}

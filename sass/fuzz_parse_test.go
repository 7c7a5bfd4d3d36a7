package sass

import (
	"strings"
	"testing"
)

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

package sm86mm

import "testing"

func TestGenerateEncodes(t *testing.T) {
	for _, in := range []Input{F16, BF16} {
		p, err := Generate(Config{In: in})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Code(); err != nil {
			t.Fatal(err)
		}
		if testing.Verbose() && in == F16 {
			t.Logf("%d instructions, loop %d..%d\n%s", len(p.Insts), p.Loop[0], p.Loop[1], p.Insts.Listing())
		}
	}
}

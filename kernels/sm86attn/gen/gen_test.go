package gen

import (
	"testing"

	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// TestGenerate: every variant generates, encodes, fits the register file
// and passes the schedule checker with no finding.
func TestGenerate(t *testing.T) {
	for _, c := range sm86attn.Variants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		if _, err := p.Code(); err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		if n := registers(c); n > 255 {
			t.Errorf("%s: %d registers", c.Name(), n)
		}
		if f := sched.Check(p.Insts, sched.Options{Strict: true}); len(f) > 0 {
			for k, x := range f {
				if k < 10 {
					t.Errorf("%s: %v", c.Name(), x)
				}
			}
			t.Errorf("%s: %d findings", c.Name(), len(f))
		}
	}
}

package sass

import "testing"

func TestExamplesRoundTrip(t *testing.T) {
	ex := Examples()
	if len(ex) < 100 {
		t.Fatalf("only %d examples", len(ex))
	}
	for _, i := range ex {
		b, err := i.Word()
		if err != nil {
			t.Errorf("%s: %v", i.Listing(0), err)
			continue
		}
		d, err := DecodeWord(b[:])
		if err != nil {
			t.Errorf("%s: decode: %v", i.Listing(0), err)
			continue
		}
		b2, _ := d.Word()
		if b2 != b {
			t.Errorf("%s: re-encode differs", i.Listing(0))
		}
		p, err := ParseInst(i.Listing(0), 0)
		if err != nil {
			t.Errorf("parse %s: %v", i.Listing(0), err)
			continue
		}
		if b3, _ := p.Word(); b3 != b {
			t.Errorf("parse %s: re-encode differs", i.Listing(0))
		}
	}
	t.Logf("%d examples", len(ex))
}

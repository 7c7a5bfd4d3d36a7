package sass

import (
	"encoding/binary"
	"testing"
)

// FuzzDecode: random words never panic the decoder, and every accepted word
// re-encodes to the same bits and parses back from its listing.
func FuzzDecode(f *testing.F) {
	for _, g := range readGolden(f, "testdata/golden_sm86.txt") {
		f.Add(g.w[:])
	}
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 16 {
			b = append(b, make([]byte, 16-len(b))...)
		}
		b = b[:16]
		i, err := DecodeWord(b)
		if err != nil {
			return
		}
		w, err := i.Word()
		if err != nil {
			t.Fatalf("accepted word %x does not re-encode: %v", b, err)
		}
		if string(w[:]) != string(b) {
			t.Fatalf("word %x re-encodes to %x", b, w)
		}
		p, err := ParseInst(i.Listing(0), 0)
		if err != nil {
			t.Fatalf("listing %q does not parse: %v", i.Listing(0), err)
		}
		if pw, err := p.Word(); err != nil || pw != w {
			t.Fatalf("listing %q parses to %x (%v), want %x", i.Listing(0), pw, err, w)
		}
		_ = i.String()
		_ = binary.LittleEndian
	})
}

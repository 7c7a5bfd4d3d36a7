package sass

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
)

// negateGolden holds FFMA's words for every source selector (registers, an
// immediate, a constant or a uniform register in the B or the C place)
// with each negate bit (A: 72, the B field's 63, the C field's 75) set and
// clear, with nvdisasm's text: a constant or uniform register in the C
// place negates through bit 63, the register then in the B place through
// bit 75 (issue #32: FFMA R2, R3, -R2, c[0x0][0x184] had been printed
// -R2, -c[...]).
const negateGolden = "testdata/golden_negate_sm86.txt"

// negateWords returns the words of negateGolden.
func negateWords() []byte {
	const lo0 = 0x0000000003027023 // FFMA R2, R3, ..., with the selector and the B field clear
	const hi0 = 0x000fe20000000002 // the register at 64: R2, stall 1
	bField := map[uint64]uint64{
		1: 4, 6: 4, 7: 4, // R4, UR4
		2: 0x3f800000, 4: 0x3f800000, // the immediate 1 (its sign in 63)
		3: 0x6100, 5: 0x6100, // c[0x0][0x184]
	}
	var out []byte
	for sel := uint64(1); sel <= 7; sel++ {
		for nb := uint64(0); nb < 2; nb++ {
			for nc := uint64(0); nc < 2; nc++ {
				for na := uint64(0); na < 2; na++ {
					lo := lo0 | sel<<9 | bField[sel]<<32 | nb<<63
					hi := hi0 | nc<<(75-64) | na<<(72-64)
					if sel >= 6 {
						hi |= 1 << (91 - 64) // the uniform-register forms
					}
					out = binary.LittleEndian.AppendUint64(out, lo)
					out = binary.LittleEndian.AppendUint64(out, hi)
				}
			}
		}
	}
	return out
}

// TestNegateGolden checks negateGolden against the model (decode, print,
// re-encode, parse), and, where nvdisasm is installed, that the file is
// what nvdisasm prints for negateWords (-update-corpus rewrites it).
func TestNegateGolden(t *testing.T) {
	ws := negateWords()
	if nvdisasm := cudatools.Path("nvdisasm"); nvdisasm != "" || os.Getenv("CI") == "true" {
		nvdisasm = cudatools.Require(t, "nvdisasm")
		texts := cudatools.Disasm(t, nvdisasm, 86, ws)
		var b bytes.Buffer
		fmt.Fprintf(&b, "# FFMA's source selectors 1..7 with each negate bit (72, 63, 75) set and clear (negate_test.go's\n")
		fmt.Fprintf(&b, "# negateWords); text from nvdisasm -b SM86 -hex (CUDA 11.8). DO NOT EDIT: go test -run TestNegateGolden -update-corpus.\n")
		fmt.Fprintf(&b, "# ADDR LO HI TEXT\n")
		for a := 0; a < len(ws); a += 16 {
			txt, ok := texts[int64(a)]
			if !ok {
				t.Fatalf("nvdisasm printed nothing at %#x", a)
			}
			fmt.Fprintf(&b, "%04x %016x %016x %s\n", a, binary.LittleEndian.Uint64(ws[a:]), binary.LittleEndian.Uint64(ws[a+8:]), txt)
		}
		if *updateCorpus {
			if err := os.WriteFile(negateGolden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if want, err := os.ReadFile(negateGolden); err != nil || !bytes.Equal(want, b.Bytes()) {
			t.Fatalf("%s is stale (%v): go test -run TestNegateGolden -update-corpus", negateGolden, err)
		}
	}
	testGolden(t, negateGolden, len(ws)/16)
}

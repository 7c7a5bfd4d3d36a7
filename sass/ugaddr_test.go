package sass

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
)

// uGlobalWords are LDG, STG and LDGSTS words with a uniform register in the
// global address (bit 76 clear): ptxas's words (LDG.E R3, [R2.64+0x10],
// STG.E [R2.64], R4, LDGSTS.E.BYPASS.128 [R13], [R8.64]) with one field
// varied, each with nvdisasm 11.8's text and whether the model takes it. The
// model refuses the words whose text is another word's: the .U32 form on
// RZ (nvdisasm leaves RZ out of both), LDGSTS with URZ (printed as the form
// without URb), and LDG's trailing predicate (64:4), whose meaning is not
// known.
var uGlobalWords = []struct {
	lo, hi uint64
	text   string
	ok     bool
}{
	{0x0000100402037981, 0x000ea2000c1e0900, "LDG.E R3, [R2.64+UR4+0x10] ;", true},
	{0x0000100402037981, 0x000ea200081e0900, "LDG.E R3, [R2.U32+UR4+0x10] ;", true},
	{0x0000103f02037981, 0x000ea2000c1e0900, "LDG.E R3, [R2.64+URZ+0x10] ;", true},
	{0x0000103f02037981, 0x000ea200081e0900, "LDG.E R3, [R2.U32+URZ+0x10] ;", true},
	{0x00001004ff037981, 0x000ea2000c1e0900, "LDG.E R3, [UR4+0x10] ;", true},
	{0x00001004ff037981, 0x000ea200081e0900, "LDG.E R3, [UR4+0x10] ;", false},
	{0xfffff00402037981, 0x000ea2000c1e0900, "LDG.E R3, [R2.64+UR4+-0x10] ;", true},
	{0x0000100402037981, 0x000ea200081e4900, "LDG.E.CONSTANT.CTA R3, [R2.U32+UR4+0x10] ;", true},
	{0x0000100402037981, 0x000ea2000c1e0d00, "LDG.E.128 R3, [R2.64+UR4+0x10] ;", true},
	{0x0000100402037981, 0x000ea2000c1e0901, "LDG.E R3, [R2.64+UR4+0x10], P6 ;", false},
	{0x0000100402037981, 0x000ea2000c1e090f, "LDG.E R3, [R2.64+UR4+0x10], !P0 ;", false},
	{0x0000000402007986, 0x000fe2000c100904, "STG.E [R2.64+UR4], R4 ;", true},
	{0x0000000402007986, 0x000fe20008100904, "STG.E [R2.U32+UR4], R4 ;", true},
	{0x0000000402007986, 0x000fe2000810093f, "STG.E [R2.U32+URZ], R4 ;", true},
	{0x00000004ff007986, 0x000fe2000c10093f, "STG.E [URZ], R4 ;", true},
	{0x0000200402007986, 0x000fe2000c100904, "STG.E [R2.64+UR4+0x20], R4 ;", true},
	{0x0000000402007986, 0x000fe2000c000d04, "STG.E.EF.128 [R2.64+UR4], R4 ;", true},
	{0x00000000080d7fae, 0x0003e4000b900c44, "LDGSTS.E.BYPASS.128 [R13], [R8.64+UR4] ;", true},
	{0x00000000ff0d7fae, 0x0003e4000b900c44, "LDGSTS.E.BYPASS.128 [R13], [RZ.64+UR4] ;", true},
	{0x00000fff080d7fae, 0x0003e4000b900c44, "LDGSTS.E.BYPASS.128 [R13], [R8.64+UR4+-0x1] ;", true},
	{0x00000000080d7fae, 0x0003e40009100c44, "LDGSTS.E.BYPASS.128 [R13], [R8.64+UR4], P2 ;", true},
	{0x00000000080d7fae, 0x0003e40009140c44, "LDGSTS.E.BYPASS.128.ZFILL [R13], [R8.64+UR4], P2 ;", true},
	{0x00000000080d7fae, 0x0003e4000b900c7f, "LDGSTS.E.BYPASS.128 [R13], [R8.64] ;", false},
}

// TestUniformGlobalAddress checks uGlobalWords against the model (decode,
// print, re-encode, parse) and, where nvdisasm is installed, the texts
// against nvdisasm.
func TestUniformGlobalAddress(t *testing.T) {
	var ws []byte
	for _, c := range uGlobalWords {
		ws = binary.LittleEndian.AppendUint64(ws, c.lo)
		ws = binary.LittleEndian.AppendUint64(ws, c.hi)
	}
	if nvdisasm := cudatools.Path("nvdisasm"); nvdisasm != "" || os.Getenv("CI") == "true" {
		nvdisasm = cudatools.Require(t, "nvdisasm")
		texts := cudatools.Disasm(t, nvdisasm, 86, ws)
		for k, c := range uGlobalWords {
			if got := texts[int64(16*k)]; got != c.text {
				t.Errorf("%016x %016x: nvdisasm prints %q, table says %q", c.lo, c.hi, got, c.text)
			}
		}
	}
	for k, c := range uGlobalWords {
		w := ws[16*k : 16*k+16]
		i, err := DecodeWord(w)
		if !c.ok {
			if !errors.Is(err, ErrUnmodeled) {
				t.Errorf("%s: decodes as %v (%v), want ErrUnmodeled", c.text, i, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		if got := i.Text(0); got != c.text {
			t.Errorf("%016x %016x prints %q, want %q", c.lo, c.hi, got, c.text)
		}
		p, err := ParseInst(i.Listing(0), 0)
		if err != nil {
			t.Errorf("parse %q: %v", i.Listing(0), err)
			continue
		}
		if b, err := p.Word(); err != nil || string(b[:]) != string(w) {
			t.Errorf("parse %q re-encodes to %x (%v), want %x", i.Listing(0), b, err, w)
		}
	}
}

// halfConstWords are HFMA2/HADD2/HMUL2 words with a constant source and
// reuse flags (control words without yield, so that nvdisasm prints
// them), printed, parsed and re-encoded as nvdisasm prints them.
var halfConstWords = []struct {
	lo, hi uint64
	text   string
}{
	{0x00005a0004007631, 0x080fe40000000005, "HFMA2 R0, R4, R5.reuse, c[0x0] [0x168] ;"},
	{0x00005a0004007631, 0x040fe40000000005, "HFMA2 R0, R4.reuse, R5, c[0x0] [0x168] ;"},
	{0x00005a0004097a31, 0x100fe40000000006, "HFMA2 R9, R4, c[0x0] [0x168], R6.reuse ;"},
	{0x00005a0004097a31, 0x040fe40000004006, "HFMA2.F32 R9, R4.reuse, c[0x0] [0x168], R6 ;"},
	{0x00005a00060b7630, 0x040fe20000000000, "HADD2 R11, R6.reuse, c[0x0] [0x168] ;"},
	{0x00005a0007007a32, 0x040fe20000000000, "HMUL2 R0, R7.reuse, c[0x0] [0x168] ;"},
	{0x00005a0007007a32, 0x040fe20000004000, "HMUL2.F32 R0, R7.reuse, c[0x0] [0x168] ;"},
	{0x70005a0004007631, 0x000fe40000000005, "HFMA2 R0, R4, R5, |c[0x0] [0x168].H1_H1| ;"},
	{0xe0005a00060b7630, 0x000fe20000000000, "HADD2 R11, R6, -|c[0x0] [0x168].H0_H0| ;"},
}

// TestHalfConstReuse checks halfConstWords as TestUniformGlobalAddress does.
func TestHalfConstReuse(t *testing.T) {
	var ws []byte
	for _, c := range halfConstWords {
		ws = binary.LittleEndian.AppendUint64(ws, c.lo)
		ws = binary.LittleEndian.AppendUint64(ws, c.hi)
	}
	if nvdisasm := cudatools.Path("nvdisasm"); nvdisasm != "" || os.Getenv("CI") == "true" {
		nvdisasm = cudatools.Require(t, "nvdisasm")
		texts := cudatools.Disasm(t, nvdisasm, 86, ws)
		for k, c := range halfConstWords {
			if got := texts[int64(16*k)]; got != c.text {
				t.Errorf("%016x %016x: nvdisasm prints %q, table says %q", c.lo, c.hi, got, c.text)
			}
		}
	}
	for k, c := range halfConstWords {
		w := ws[16*k : 16*k+16]
		i, err := DecodeWord(w)
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		if got := i.Text(0); got != c.text {
			t.Errorf("%016x %016x prints %q, want %q", c.lo, c.hi, got, c.text)
		}
		p, err := ParseInst(i.Listing(0), 0)
		if err != nil {
			t.Errorf("parse %q: %v", i.Listing(0), err)
			continue
		}
		if b, err := p.Word(); err != nil || string(b[:]) != string(w) {
			t.Errorf("parse %q re-encodes to %x (%v), want %x", i.Listing(0), b, err, w)
		}
	}
}

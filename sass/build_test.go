package sass

import (
	"errors"
	"reflect"
	"testing"
)

// A small kernel built with New, as kernels are: every instruction
// encodes, decodes to itself and prints what the golden corpus shows for
// the same words.
func testKernel() Program {
	c := Control{Stall: 4, Yield: true}
	return Program{
		New("MOV", "", R(1), CB(0, 0x28)).C(Control{Stall: 2}),
		New("S2R", "", R(8), SR(SRTidX)).C(Control{Stall: 1, WriteSB: SB0}),
		New("ULDC", "64", UR(4), CB(0, 0x118)).C(c),
		New("MOV", "", R(5), Imm(4)).C(c),
		New("IMAD", "WIDE.U32", R(2), R(8), R(5), CB(0, 0x160)).C(Control{Stall: 5, Wait: 1}),
		New("LDG", "E", R(4), G64(2, 0)).C(Control{Stall: 4, WriteSB: SB2}),
		New("FFMA", "", R(4), R(4), R(4), CB(0, 0x16c)).C(Control{Stall: 4, Wait: 4}),
		New("MUFU", "EX2", R(5), R(4)).C(Control{Stall: 1, WriteSB: SB0}),
		New("FADD", "", R(5), R(5), F32(-24)).C(Control{Stall: 4, Wait: 1}),
		New("ISETP", "GT.U32.AND", P(P0), P(PT), R(5), Imm(0x64), P(PT)).C(Control{Stall: 13, Yield: true}),
		New("STG", "E", G64(2, 8), R(5)).When(If(P0)).C(Control{Stall: 1, ReadSB: SB1}),
		New("STS", "", Shared(8, 4, 0), R(5)).C(Control{Stall: 1}),
		New("BAR", "SYNC", Imm(0)).C(Control{Stall: 6}),
		New("LDS", "", R(9), Shared(8, 4, 0x80)).C(Control{Stall: 1, WriteSB: SB0}),
		New("RED", "E.ADD.F32.FTZ.RN.STRONG.GPU", G64(2, 8), R(9)).C(Control{Stall: 1, Wait: 1}),
		New("SHFL", "BFLY", P(PT), R(7), R(6), Imm(1), Imm(0x1f)).C(Control{Stall: 2, WriteSB: SB0}),
		New("HMMA", "16816.F32.BF16", R(16), R(4), R(12), R(16)).C(Control{Stall: 2, WriteSB: SB1}),
		New("LDSM", "16.MT88.4", R(8), Shared(7, 0, 0x40)).C(Control{Stall: 4, WriteSB: SB2}),
		New("LDGSTS", "E.BYPASS.128", Shared(7, 0, 0x100), G64(2, 0x200)).C(Control{Stall: 4, ReadSB: SB1}),
		New("LDGDEPBAR", "").C(Control{Stall: 1, WriteSB: SB0}),
		New("DEPBAR", "LE", SB(0), Imm(1)).C(Control{Stall: 4}),
		New("BAR", "SYNC", Imm(1), Imm(128)).C(Control{Stall: 6}),
		New("LOP3", "LUT", R(4), R(5), Imm(0xff00), R(4), Imm(0x48), NotP(PT)).C(c),
		New("SHF", "R.U32.HI", R(0), R(RZ), Imm(3), R(0)).C(c),
		New("IADD3", "", R(0), R(0), R(1), R(RZ)).C(c),
		New("EXIT", "").C(Control{Stall: 5}),
		New("BRA", "", Target(-16)).C(Control{Yield: true}),
	}
}

func init() { OracleProgram("sass.testKernel", 86, testKernel()) }

func TestBuiltKernel(t *testing.T) {
	p := testKernel()
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for k := range p {
		if !reflect.DeepEqual(p[k], q[k]) {
			t.Errorf("%d: built %#v\ndecoded %#v", k, p[k], q[k])
		}
	}
	r, err := Parse(p.Listing())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, q) {
		t.Errorf("parse(listing) differs:\n%s", p.Listing())
	}
	if got := p[5].String(); got != "LDG.E R4, [R2.64] ;" {
		t.Errorf("LDG prints %q", got)
	}
	if w := p[1].Writes(); len(w) != 1 || w[0] != RegLoc(8) {
		t.Errorf("S2R writes %v", w)
	}
	if r := p[16].Reads(); len(r) != 10 {
		t.Errorf("HMMA reads %v", r)
	}
	if !p[5].VariableLatency() || p[6].VariableLatency() {
		t.Error("variable latency")
	}
}

func TestInvalid(t *testing.T) {
	cases := []struct {
		i    Inst
		want error
	}{
		{New("FFMA", "FOO", R(1), R(2), R(3), R(4)), ErrNoForm},
		{New("XYZ", ""), ErrUnknownOp},
		{New("MOV", "", R(1), R(2)).Stall(16), ErrControl},
		{New("FFMA", "", R(1), R(2), R(3), R(4)).Reuse(6).Yield(), ErrControl},
		{New("LDG", "E", R(1), G64(2, 1<<24)), ErrInvalid},
		{New("LDS", "", R(1), G64(2, 0)), ErrInvalid},
		{New("BAR", "SYNC", Imm(1), Imm(0)), ErrNoForm},
	}
	for _, c := range cases {
		if _, err := c.i.Word(); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.i.Listing(0), err, c.want)
		}
	}
	if _, err := DecodeWord(make([]byte, 15)); !errors.Is(err, ErrLength) {
		t.Error(err)
	}
	if _, err := ParseInst("FFMA R1, R2", 0); !errors.Is(err, ErrSyntax) {
		t.Error(err)
	}
}

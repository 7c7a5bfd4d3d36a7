package sass

import (
	"errors"
	"reflect"
	"testing"
)

// A small kernel built with the constructors: every instruction encodes,
// decodes to itself and prints what the golden corpus shows for the same
// words.
func testKernel() Program {
	c := Control{Stall: 4, Yield: true}
	return Program{
		MOV(1, CB(0, 0x28)).C(Control{Stall: 2}),
		S2R(8, SRTidX).C(Control{Stall: 1, WriteSB: SB0}),
		ULDC64(4, 0, 0x118).C(c),
		MOV(5, Imm(4)).C(c),
		IMADWideU32(2, 8, R(5), CB(0, 0x160)).C(Control{Stall: 5, Wait: 1}),
		LDG("", 4, 2, 0).C(Control{Stall: 4, WriteSB: SB2}),
		FFMA(4, 4, R(4), CB(0, 0x16c)).C(Control{Stall: 4, Wait: 4}),
		MUFU("EX2", 5, 4).C(Control{Stall: 1, WriteSB: SB0}),
		FADD(5, R(5), F32(-24)).C(Control{Stall: 4, Wait: 1}),
		ISETP("GT.U32.AND", P0, 5, Imm(0x64)).C(Control{Stall: 13, Yield: true}),
		STG("", 2, 8, 5).When(If(P0)).C(Control{Stall: 1, ReadSB: SB1}),
		STS("", 8, 4, 0, 5).C(Control{Stall: 1}),
		BARSync(0).C(Control{Stall: 6}),
		LDS("", 9, 8, 4, 0x80).C(Control{Stall: 1, WriteSB: SB0}),
		REDAddF32(2, 8, 9).C(Control{Stall: 1, Wait: 1}),
		SHFL("BFLY", 7, 6, Imm(1), Imm(0x1f)).C(Control{Stall: 2, WriteSB: SB0}),
		HMMA16816F32(16, 4, 12, 16, true).C(Control{Stall: 2, WriteSB: SB1}),
		LDSM(4, true, 8, 7, 0x40).C(Control{Stall: 4, WriteSB: SB2}),
		LDGSTS128(7, 0x100, 2, 0x200).C(Control{Stall: 4, ReadSB: SB1}),
		LDGDEPBAR().C(Control{Stall: 1, WriteSB: SB0}),
		DEPBARLE(0, 1).C(Control{Stall: 4}),
		BARSyncCount(1, 128).C(Control{Stall: 6}),
		LOP3(4, 5, Imm(0xff00), R(4), 0x48).C(c),
		SHF("R.U32.HI", 0, RZ, Imm(3), R(0)).C(c),
		IADD3(0, R(0), R(1), R(RZ)).C(c),
		EXIT().C(Control{Stall: 5}),
		BRA(-16).C(Control{Yield: true}),
	}
}

func init() { OracleProgram("sass.testKernel", 86, testKernel()) }

func TestConstructors(t *testing.T) {
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
		{FFMA(1, 2, R(3), R(4)).With("FOO"), ErrNoForm},
		{New("XYZ", ""), ErrUnknownOp},
		{MOV(1, R(2)).Stall(16), ErrControl},
		{FFMA(1, 2, R(3), R(4)).Reuse(6).Yield(), ErrControl},
		{LDG("", 1, 2, 1<<24), ErrInvalid},
		{New("LDS", "", R(1), G64(2, 0)), ErrInvalid},
		{BARSyncCount(1, 0), ErrNoForm},
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

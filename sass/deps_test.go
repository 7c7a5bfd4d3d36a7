package sass

import (
	"strings"
	"testing"
)

func TestDepsOf(t *testing.T) {
	cases := []struct {
		text          string
		class         Class
		reads, writes string
		late          bool
	}{
		{"HMMA.16816.F32 R4, R8, R12, R20 ;", ClassHMMA, "R8 R9 R10 R11 R12 R13 R20 R21 R22 R23", "R4 R5 R6 R7", true},
		{"HMMA.1688.F32 R4, R8, R12, R4 ;", ClassHMMA, "R8 R9 R12 R4 R5 R6 R7", "R4 R5 R6 R7", true},
		{"IMAD.WIDE.U32 R2, R0, R3, c[0x0][0x160] ;", ClassFMA, "R0 R3", "R2 R3", false},
		{"IMAD.WIDE R6, R21, R0, R6 ;", ClassFMA, "R21 R0 R6 R7", "R6 R7", false},
		{"LDSM.16.M88.4 R24, [R3+0x400] ;", ClassShared, "R3", "R24 R25 R26 R27", true},
		{"LDSM.16.MT88.2 R16, [R19+0x200] ;", ClassShared, "R19", "R16 R17", true},
		{"LDSM.16.M88 R20, [R19+0x400] ;", ClassShared, "R19", "R20", true},
		{"IADD3 R4, P1, R4, 0x4, RZ ;", ClassALU, "R4", "R4 P1", false},
		{"IMAD.X R3, RZ, RZ, R3, P1 ;", ClassFMA, "R3 P1", "R3", false},
		{"ISETP.GE.U32.AND P0, PT, R2, c[0x0][0x168], PT ;", ClassALU, "R2", "P0", false},
		{"STS.128 [R20.X16], R20 ;", ClassShared, "R20 R21 R22 R23", "", true},
		{"STG.E [R20.64], R7 ;", ClassGlobal, "R20 R21 UR4 UR5 R7", "", true},
		{"LDG.E.128 R4, [R2.64] ;", ClassGlobal, "R2 R3 UR4 UR5", "R4 R5 R6 R7", true},
		{"CS2R R16, SRZ ;", ClassALU, "", "R16 R17", false},
		{"ULDC.64 UR4, c[0x0][0x118] ;", ClassUniform, "", "UR4 UR5", false},
		{"S2R R20, SR_TID.X ;", ClassS2R, "", "R20", false},
		{"MUFU.EX2 R6, R0 ;", ClassSFU, "R0", "R6", false},
		{"SHFL.BFLY PT, R4, R9, 0x1, 0x1f ;", ClassShared, "R9", "R4", false},
		{"LDGSTS.E.BYPASS.128 [R19+0x100], [R2.64+0x200] ;", ClassGlobal, "R19 R2 R3 UR4 UR5", "", true},
	}
	for _, tc := range cases {
		i, err := ParseInst(tc.text, 0)
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		d, err := DepsOf(i)
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		if got := locs(d.Reads); got != tc.reads {
			t.Errorf("%s: reads %q, want %q", tc.text, got, tc.reads)
		}
		if got := locs(d.Writes); got != tc.writes {
			t.Errorf("%s: writes %q, want %q", tc.text, got, tc.writes)
		}
		if d.Class != tc.class {
			t.Errorf("%s: class %v, want %v", tc.text, d.Class, tc.class)
		}
		if (len(d.Late) > 0) != tc.late {
			t.Errorf("%s: late reads %v", tc.text, d.Late)
		}
	}
	g, _ := ParseInst("@!P0 BRA 0x120 ;", 0x1d0)
	if d, err := DepsOf(g); err != nil || !d.HasGuard || d.Guard != PredLoc(P0) || d.Class != ClassBranch {
		t.Errorf("guarded BRA: %+v, %v", d, err)
	}
}

func locs(ls []Loc) string {
	s := make([]string, len(ls))
	for k, l := range ls {
		s[k] = l.String()
	}
	return strings.Join(s, " ")
}

// TestOpcodeTable: every opcode of the table has encoding forms and a
// latency class, appears once, and every simulator operation serves some
// opcode.
func TestOpcodeTable(t *testing.T) {
	ensureTables()
	used := map[SimOp]bool{}
	for k := range opcodes {
		o := &opcodes[k]
		if len(o.forms) == 0 {
			t.Errorf("%s: no encoding form", o.op)
		}
		if o.class == ClassNone {
			t.Errorf("%s: no latency class", o.op)
		}
		if o.general != "" && lookupOp(o.general) == nil {
			t.Errorf("%s: general opcode %s not in the table", o.op, o.general)
		}
		if len(formsByOp[o.op]) == 0 {
			t.Errorf("%s: no form built", o.op)
		}
		used[o.sim] = true
	}
	for s := SimOp(1); s < NumSimOps; s++ {
		if !used[s] {
			t.Errorf("simulator operation %d serves no opcode", s)
		}
	}
}

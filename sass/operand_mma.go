package sass

import (
	"math"
	"strconv"
	"strings"

	"github.com/tcrt-go/tcrt/tile"
)

// Operands of the mma.sync kernels' forms (opcodes.go: P2R, HMUL2, DEPBAR): the predicate
// file (P2R R3, PR, RZ, 0x8), binary16 immediates (HMUL2 R37, R17, 256,
// 256) and scoreboard sets (DEPBAR.LE SB1, 0x0, {3,2}).

// Operand field kinds of those forms, numbered apart from form.go's.
const (
	fPR  fkind = 64 + iota // the predicate file as one operand, printed PR (P2R); no bits
	fH                     // binary16 immediate, width 16 (one half of HMUL2's f16x2 pair)
	fSBS                   // scoreboard set {5,..,0}: a mask of width bits (DEPBAR), nonzero
	fHB                    // bfloat16 immediate, width 16 (one half of HFMA2.BF16_V2's pair)
)

// Operand kinds of those fields, numbered after KDouble.
const (
	KPredFile Kind = KDouble + 1 + iota // the predicate file as a whole, printed PR (P2R)
	KHalf                               // binary16 immediate: Operand.Imm holds its 16 bits
	KSBSet                              // a set of scoreboards {5,..,0} (DEPBAR): Operand.Imm holds the mask, bit n for SBn
	KBF16                               // bfloat16 immediate: Operand.Imm holds its 16 bits
)

// kindsMMA names the field kinds in the forms' notation.
var kindsMMA = map[string]fkind{"PR": fPR, "H": fH, "HB": fHB, "SBS": fSBS, "MU": fMU, "MGU": fMGU, "MGU32": fMGU32}

// formatFloat16 prints a binary16 immediate as nvdisasm 11.8 does: as the
// binary32 of the same value (measured on HMUL2 words with every class of
// value: 1, 0.333251953125, 5.9604644775390625e-08, 65504, -0.0 , +INF ,
// +QNAN for every NaN).
func formatFloat16(b uint16) string {
	v := float64(tile.F16ToF32(b))
	if math.IsNaN(v) {
		if b&0x8000 != 0 {
			return "-QNAN "
		}
		return "+QNAN "
	}
	return formatFloat32(math.Float32bits(float32(v)))
}

// formatBF16 prints a bfloat16 immediate as nvdisasm 11.8 does: as the
// binary32 of the same value, NaNs as formatFloat16's (HFMA2.BF16_V2
// words with 1, 0.0078125, -INF and NaNs of either sign).
func formatBF16(b uint16) string {
	if b&0x7fff > 0x7f80 {
		if b&0x8000 != 0 {
			return "-QNAN "
		}
		return "+QNAN "
	}
	return formatFloat32(uint32(b) << 16)
}

// parseBF16 reads a bfloat16 immediate as formatBF16 prints it (or its
// bits, 0hXXXX); the value must be exact.
func parseBF16(s string) (uint16, bool) {
	if strings.HasPrefix(s, "0h") && len(s) == 6 {
		v, err := strconv.ParseUint(s[2:], 16, 16)
		return uint16(v), err == nil
	}
	switch strings.TrimSpace(s) {
	case "+QNAN":
		return 0x7fff, true
	case "-QNAN":
		return 0xffff, true
	}
	f, ok := parseFloat32(s)
	if !ok || f&0xffff != 0 {
		return 0, false
	}
	return uint16(f >> 16), true
}

// parseFloat16 reads a binary16 immediate as formatFloat16 prints it (or
// its bits, 0hXXXX, as a listing writes a NaN); the value must be exact.
func parseFloat16(s string) (uint16, bool) {
	if strings.HasPrefix(s, "0h") && len(s) == 6 {
		v, err := strconv.ParseUint(s[2:], 16, 16)
		return uint16(v), err == nil
	}
	switch strings.TrimSpace(s) {
	case "+QNAN":
		return 0x7fff, true
	case "-QNAN":
		return 0xffff, true
	}
	f, ok := parseFloat32(s)
	if !ok {
		return 0, false
	}
	v := float64(math.Float32frombits(f))
	for b := 0; b < 1<<16; b++ {
		// 65536 candidates at most, and only on parsing text
		if x := float64(tile.F16ToF32(uint16(b))); x == v && math.Signbit(x) == math.Signbit(v) {
			return uint16(b), true
		}
	}
	return 0, false
}

// formatSBSet prints a scoreboard mask as nvdisasm does: {3,2}, highest
// first.
func formatSBSet(m uint64) string {
	var parts []string
	for n := 63; n >= 0; n-- {
		if m>>uint(n)&1 != 0 {
			parts = append(parts, strconv.Itoa(n))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// parseSBSet reads formatSBSet's text.
func parseSBSet(s string) (uint64, bool) {
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return 0, false
	}
	var m uint64
	last := 64
	for _, t := range strings.Split(s[1:len(s)-1], ",") {
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || n < 0 || n >= last {
			return 0, false
		}
		m |= 1 << uint(n)
		last = n
	}
	return m, m != 0
}

// joinBraces rejoins the operand tokens a split on commas cut inside
// braces ({3,2} is one operand).
func joinBraces(toks []string) []string {
	var out []string
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		if strings.HasPrefix(t, "{") {
			for !strings.HasSuffix(t, "}") && k+1 < len(toks) {
				k++
				t += "," + toks[k]
			}
		}
		out = append(out, t)
	}
	return out
}

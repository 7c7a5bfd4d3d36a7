package sass

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// TestDecodeRefusesTextures: nvcc's texture and surface words (from
// tex1Dfetch, tex2D, tex2Dgather, surf2Dread and surf2Dwrite on
// cudaTextureObject_t / cudaSurfaceObject_t, sm_86, -O3 and -G) are
// refused with ErrUnsupported, naming the instruction, and still wrap
// ErrUnmodeled; no form of the model uses their opcodes.
func TestDecodeRefusesTextures(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi uint64
	}{
		{"TEX", 0x30005a0c04057b60, 0x000fc200019e01ff},  // TEX.SCR.LL RZ, R5, R4, R12, 0x0, 0x5a, 2D, 0x1
		{"TEX", 0x3800002220207361, 0x00321e00019e0f22},  // TEX.SCR.B.LL R34, R32, R32, R34, 2D
		{"TLD", 0x100058ff02007b66, 0x000f4200009e01ff},  // TLD.SCR.LZ RZ, R0, R2, 0x0, 0x58, 1D, 0x1
		{"TLD", 0x1800000d0c0c7367, 0x00321e00009e0f20},  // TLD.SCR.B.LZ R32, R12, R12, R13, 1D
		{"TLD4", 0x30005a0e0e087b63, 0x000f4200001e02ff}, // TLD4.SCR.R RZ, R8, R14, R14, 0x0, 0x5a, 2D, 0x2
		{"TLD4", 0x3800000c0e0c7364, 0x00321e00019e0f0e}, // TLD4.SCR.A.B R14, R12, R14, R12, 2D
		{"SULD", 0x700000002828799a, 0x00321e00001ea90d}, // SULD.D.BA.2D.STRONG.SM.TRAP R40, [R40], R13
		{"SUST", 0x6800000a0c00799e, 0x0033de000010a907}, // SUST.D.BA.2D.STRONG.SM [R12], R10, R7
	} {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], c.lo)
		binary.LittleEndian.PutUint64(b[8:], c.hi)
		_, err := DecodeWord(b[:])
		if !errors.Is(err, ErrUnsupported) || !errors.Is(err, ErrUnmodeled) || !strings.Contains(err.Error(), " "+c.name+" ") {
			t.Errorf("%s %016x %016x: %v, want ErrUnsupported naming %s", c.name, c.lo, c.hi, err, c.name)
		}
	}
	ensureTables()
	for code, name := range unsupportedOps {
		if len(formsByCode[code]) != 0 {
			t.Errorf("opcode %#x (%s) is refused by name but has forms", code, name)
		}
	}
}

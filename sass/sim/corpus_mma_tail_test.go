package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The tail3_mma corpus kernels (mma.m16n8k128 .b1, mma.sp with tf32 and
// with 8- and 4-bit integers), each one ptxas-compiled mma of one warp
// with the tensor-core test harness's layout (mma_tc_test.go: lane l's
// A, B, C and metadata words at in + 96*l, D at out + 96*l), against the
// same references written from the PTX ISA's fragment figures: fresh
// random inputs (exact small values, then any), then one-hot rows of A;
// integers bit for bit. The sparse layouts are the ISA's as read (see
// mma_tc.go), not measured on hardware.

// tcCorpusCase is the tcCases entry with instruction text text.
func tcCorpusCase(t *testing.T, text string) tcCase {
	t.Helper()
	for _, c := range tcCases() {
		if c.text == text {
			return c
		}
	}
	t.Fatalf("no tensor-core case %q", text)
	return tcCase{}
}

// runTail3 runs corpus kernel p (tail3_mma) as case c: random trials and
// a few one-hot passes of A, D checked and the words after it untouched.
func runTail3(t *testing.T, p sass.Program, c tcCase, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	passes := []int{-1, -1, -1, 0, 1, c.k/2 + 1, c.k - 1}
	for n, pass := range passes {
		x := c.fill(r, n == 0, pass, -1)
		in := c.pack(x)
		poison := poisonWords(24 * 32)
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", append([]uint32(nil), poison...), 0)
		if _, err := s.Launch(Config{Block: [3]int{32}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		c.check(t, x, simWords(m.Bytes("out")), fmt.Sprintf("trial %d (A one-hot pass %d)", n, pass),
			func(l, r int) uint32 { return poison[24*l+r] })
	}
}

// TestSimPtxasBMMA168128 runs mma.m16n8k128 .b1 .and.popc and .xor.popc.
func TestSimPtxasBMMA168128(t *testing.T) {
	corpus.ForSMs(t, func(t *testing.T, sm int) {
		runTail3(t, corpusKernelOrSkip(t, "tail3_mma", "bmma_and_168128", sm), tcCorpusCase(t, "BMMA.168128.AND.POPC R16, R4.ROW, R8.COL, R12"), 200)
		runTail3(t, corpusKernelOrSkip(t, "tail3_mma", "bmma_xor_168128", sm), tcCorpusCase(t, "BMMA.168128.XOR.POPC R16, R4.ROW, R8.COL, R12"), 202)
	})
}

// TestSimPtxasSparseTF32 runs mma.sp m16n8k8 (selector 3) and m16n8k16
// (selector 1) with tf32 inputs.
func TestSimPtxasSparseTF32(t *testing.T) {
	corpus.ForSMs(t, func(t *testing.T, sm int) {
		runTail3(t, corpusKernelOrSkip(t, "tail3_mma", "sp_tf32_k8", sm), tcCorpusCase(t, "HMMA.SP.1688.F32.TF32 R16, R4, R8, R12, R20, 0x3"), 204)
		runTail3(t, corpusKernelOrSkip(t, "tail3_mma", "sp_tf32_k16", sm), tcCorpusCase(t, "HMMA.SP.16816.F32.TF32 R16, R4, R8, R12, R20, 0x1"), 206)
	})
}

// TestSimPtxasSparseInt runs mma.sp on 8-bit (m16n8k32 s8.u8 satfinite,
// selector 1; m16n8k64 u8.s8) and 4-bit integers (m16n8k64 s4 satfinite,
// selector 1; m16n8k128 u4.s4).
func TestSimPtxasSparseInt(t *testing.T) {
	corpus.ForSMs(t, func(t *testing.T, sm int) {
		runTail3(t, corpusKernelOrSkip(t, "tail3_mma", "sp_s8u8_k32_sat", sm), tcCorpusCase(t, "IMMA.SP.16832.S8.U8.SAT R16, R4.ROW, R8.COL, R12, R20, 0x1"), 208)
		runTail3(t, corpusKernelOrSkip(t, "tail3_mma", "sp_u8s8_k64", sm), tcCorpusCase(t, "IMMA.SP.16864.U8.S8 R16, R4.ROW, R8.COL, R12, R20, 0x0"), 210)
		runTail3(t, corpusKernelOrSkip(t, "tail3_mma", "sp_s4_k64_sat", sm), tcCorpusCase(t, "IMMA.SP.16864.S4.S4.SAT R16, R4.ROW, R8.COL, R12, R20, 0x1"), 212)
		runTail3(t, corpusKernelOrSkip(t, "tail3_mma", "sp_u4s4_k128", sm), tcCorpusCase(t, "IMMA.SP.168128.U4.S4 R16, R4.ROW, R8.COL, R12, R20, 0x0"), 214)
	})
}

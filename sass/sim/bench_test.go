package sim

import (
	"math"
	"testing"
	"time"
)

// simBenchSrc is an arithmetic loop in the mix of a matmul kernel's inner
// loop: FFMAs, integer address updates, a compare and a uniform branch.
const simBenchSrc = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W1:-:S01] S2R R1, SR_CTAID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B01----:R-:W-:-:S04] IMAD R2, R1, c[0x0][0x0], R0 ;
[B------:R-:W-:-:S04] I2FP.F32.U32 R10, R2 ;
[B------:R-:W-:-:S04] MOV R11, 0x3f800000 ;
[B------:R-:W-:-:S04] MOV R12, RZ ;
[B------:R-:W-:-:S04] MOV R13, RZ ;
[B------:R-:W-:-:S04] MOV R8, RZ ;
loop:
[B------:R-:W-:-:S04] FFMA R12, R10, R11, R12 ;
[B------:R-:W-:-:S04] FFMA R13, R11, R12, R13 ;
[B------:R-:W-:-:S04] FFMA R12, R13, R10, R12 ;
[B------:R-:W-:-:S04] FADD R11, R11, R13 ;
[B------:R-:W-:-:S04] IADD3 R8, R8, 0x1, RZ ;
[B------:R-:W-:-:S04] LOP3.LUT R9, R8, 0xff, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S04] IMAD R14, R9, R5, R0 ;
[B------:R-:W-:-:S13] ISETP.LT.U32.AND P0, PT, R8, c[0x0][0x168], PT ;
[B------:R-:W-:-:S05] @P0 BRA loop ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R2, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] FADD R12, R12, R14 ;
[B------:R-:W-:-:S04] STG.E [R6.64], R12 ;
[B------:R-:W-:-:S05] EXIT ;
`

func benchSim(b *testing.B, src string, grid, block, iters int, poison bool) {
	p := asm(b, src)
	s, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	m := NewMemory()
	out := alloc(b, m, "out", nil, grid*block)
	cfg := Config{Grid: [3]int{grid}, Block: [3]int{block}, Memory: m, Params: params(out, iters), Poison: poison}
	var total int64
	var elapsed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		st, err := s.Launch(cfg)
		elapsed += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		total += st.ThreadInstructions
	}
	b.ReportMetric(float64(total)/elapsed.Seconds()/1e6, "Minst/s")
	_ = math.Pi
}

// BenchmarkSimALU measures thread-instructions per second on an
// arithmetic loop: 64 CTAs of 256 threads, 200 iterations.
func BenchmarkSimALU(b *testing.B) { benchSim(b, simBenchSrc, 64, 256, 200, false) }

// BenchmarkSimALUPoison is BenchmarkSimALU with poison checking on.
func BenchmarkSimALUPoison(b *testing.B) { benchSim(b, simBenchSrc, 64, 256, 200, true) }

// BenchmarkSimVectorAdd measures the memory-bound vector add, 1<<18
// elements.
func BenchmarkSimVectorAdd(b *testing.B) {
	p := asm(b, vecAdd)
	s, _ := New(p)
	n := 1 << 18
	m := NewMemory()
	ax, ay, az := alloc(b, m, "x", make([]uint32, n), 0), alloc(b, m, "y", make([]uint32, n), 0), alloc(b, m, "z", nil, n)
	cfg := Config{Grid: [3]int{n / 256}, Block: [3]int{256}, Memory: m, Params: params(ax, ay, az, n)}
	var total int64
	var elapsed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		st, err := s.Launch(cfg)
		elapsed += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		total += st.ThreadInstructions
	}
	b.ReportMetric(float64(total)/elapsed.Seconds()/1e6, "Minst/s")
}

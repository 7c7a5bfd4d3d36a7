package sim

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// FuzzSimProgram runs arbitrary instruction words: the words that decode
// (every word of the seeds does: runs of ptxas's code from the corpus)
// followed by EXIT, in one warp and in two CTAs of 48 threads, with and
// without poison checking, over a small mapped buffer and a step bound. The
// simulator must return (a fault is fine) without panicking or running
// past the bound, and every error must wrap one of its sentinels.
func FuzzSimProgram(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpus.Dir, "cubin", "*.sm_86.cubin"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range corpus.TextSections(f, b) {
			for off := 0; off+16 <= len(s.Data); off += 16 * 24 {
				f.Add(s.Data[off:min(len(s.Data), off+16*24)], uint8(0))
			}
		}
	}
	f.Fuzz(func(t *testing.T, code []byte, mode uint8) {
		var p sass.Program
		for k := 0; k+16 <= len(code) && len(p) < 64; k += 16 {
			if i, err := sass.DecodeWord(code[k : k+16]); err == nil {
				p = append(p, i)
			}
		}
		p = append(p, sass.New("EXIT", ""))
		s, err := New(p)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrConfig) {
				t.Fatalf("New: error %v wraps no sentinel", err)
			}
			return
		}
		m := NewMemory()
		base, err := m.Alloc("buf", 4096)
		if err != nil {
			t.Fatal(err)
		}
		params := make([]byte, 64)
		for k := 0; k < 8; k++ {
			v := base + uint64(512*k)
			for j := 0; j < 8; j++ {
				params[8*k+j] = byte(v >> (8 * j))
			}
		}
		cfg := Config{Block: [3]int{32}, SharedBytes: 1024, Params: params, Memory: m, MaxSteps: 20000, Workers: 1, Poison: mode&1 != 0}
		if mode&2 != 0 {
			cfg.Grid, cfg.Block = [3]int{2}, [3]int{48}
		}
		if _, err := s.Launch(cfg); err != nil {
			for _, e := range []error{ErrOutOfBounds, ErrMisaligned, ErrUninitialized, ErrDeadlock, ErrScoreboard,
				ErrInFlight, ErrDivergent, ErrUnsupported, ErrStepLimit, ErrConfig, ErrTrap} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("Launch: error %v wraps no sentinel", err)
		}
	})
}

package sim

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// TestSimNVCCConstPtr: reloc.cu's const_ptr reads a __device__ global
// through a __constant__ pointer, whose value nvcc leaves to a
// relocation of the constant bank (.rela.nv.constant3, R_CUDA_G64 of g,
// addend 4); cubin.RelocateSection applies it with g's address in the
// simulator's memory. Without the address, and for a section whose
// relocations are function addresses (.debug_frame's R_CUDA_64), the
// cubin is refused naming the relocation.
func TestSimNVCCConstPtr(t *testing.T) { corpus.ForSMs(t, simNVCCConstPtr) }

func simNVCCConstPtr(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(94, 95))
	_, raw := corpus.NVCCCode(t, "reloc", "const_ptr", sm)
	f, err := cubin.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := f.SectionRelocations(".nv.constant3")
	if err != nil || len(rs) != 1 || cubin.RelocName(rs[0].Type) != "R_CUDA_G64" || rs[0].Sym != "g" || rs[0].Addend != 4 {
		t.Fatalf(".nv.constant3 relocations %+v (%v), want one R_CUDA_G64 of g + 4", rs, err)
	}
	for _, n := range []int{1, 7, 129, 1000} {
		g := []uint32{r.Uint32(), r.Uint32(), r.Uint32(), r.Uint32()}
		x := make([]uint32, n)
		for i := range x {
			x[i] = r.Uint32()
		}
		m := NewMemory()
		ag := alloc(t, m, "g", g, 0)
		addr := func(sym string) (uint64, bool) { return ag, sym == "g" }
		bank, err := f.RelocateSection(".nv.constant3", addr)
		if err != nil {
			t.Fatal(err)
		}
		code, err := f.Relocate("const_ptr", addr)
		if err != nil {
			t.Fatal(err)
		}
		p, err := sass.Decode(code)
		if err != nil {
			t.Fatal(err)
		}
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(n+32), 0)
		if _, err := Launch(p, Config{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Memory: m, Params: params(ax, ay, uint32(n)),
			Banks: map[uint8][]byte{3: bank}, Poison: true}); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		y := simWords(m.Bytes("y"))
		for i := range x {
			if want := x[i] + g[1+i&1]; y[i] != want {
				t.Fatalf("n=%d: y[%d] = %#x, want %#x", n, i, y[i], want)
			}
		}
		checkPoison(t, "const_ptr", y, n)
	}
	if _, err := f.RelocateSection(".nv.constant3", func(string) (uint64, bool) { return 0, false }); !errors.Is(err, cubin.ErrRelocation) ||
		!strings.Contains(err.Error(), "R_CUDA_G64 of g") {
		t.Fatalf("RelocateSection without an address: %v", err)
	}
	if _, err := f.RelocateSection(".debug_frame", func(string) (uint64, bool) { return 0x1000, true }); !errors.Is(err, cubin.ErrRelocation) ||
		!strings.Contains(err.Error(), "R_CUDA_64") {
		t.Fatalf("RelocateSection of .debug_frame: %v, want ErrRelocation naming R_CUDA_64", err)
	}
}

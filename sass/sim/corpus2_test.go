package sim

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"

	"github.com/tcrt-go/tcrt/sass/cubin"
)

// The corpus kernels of reduce.ptx, uniform.ptx and control.ptx's switch8
// run in the simulator on random inputs against plainly written Go
// references (issue #14). Each runs on the sm_86 and the sm_89 cubin.

// launchCorpus decodes kernel name of the corpus cubin file for sm_<sm>
// and launches it with cfg. A word outside the instruction model or an
// instruction the simulator refuses skips the test before it runs, naming
// the form (corpusKernelOrSkip); any error of the launch fails it, even
// ErrUnsupported (running past the end of the program is one).
func launchCorpus(t *testing.T, file, name string, sm int, cfg Config) {
	t.Helper()
	p := corpusKernelOrSkip(t, file, name, sm)
	if _, err := Launch(p, cfg); err != nil {
		t.Fatalf("%s sm_%d %s: %v", file, sm, name, err)
	}
}

// corpusKernelOrSkip is corpusKernel, except that a word the decoder
// does not model skips the test (naming the word) instead of failing it,
// and that a form the simulator refuses skips it too.
func corpusKernelOrSkip(t *testing.T, file, name string, sm int) sass.Program {
	t.Helper()
	code := corpus.Code(t, file, name, sm)
	p, err := sass.Decode(code)
	if errors.Is(err, sass.ErrUnmodeled) || errors.Is(err, sass.ErrUnknownOp) {
		for k := 0; k < len(code)/16; k++ {
			if _, err := sass.DecodeWord(code[16*k : 16*k+16]); err != nil {
				t.Skipf("%s sm_%d %s: decoder gap at %#x %s: %v", file, sm, name, 16*k, goldenWordText(t, file, name, sm, 16*k), err)
			}
		}
	}
	if err != nil {
		t.Fatalf("%s sm_%d %s: %v", file, sm, name, err)
	}
	ks, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	for k, err := range ks.Unsupported() {
		t.Skipf("%s sm_%d %s: simulator gap at %#x %s: %v", file, sm, name, 16*k, p[k].Text(int64(16*k)), err)
	}
	return p
}

// goldenWordText is nvdisasm's text of the word at byte offset off of kernel
// name, from the corpus's golden listing.
func goldenWordText(t *testing.T, file, name string, sm, off int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpus.Dir, "golden", fmt.Sprintf("%s.sm_%d.txt", file, sm)))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "# section ") {
			in = l == "# section .text."+name
			continue
		}
		if f := strings.SplitN(l, " ", 4); in && len(f) == 4 && f[0] == fmt.Sprintf("%04x", off) {
			return "`" + f[3] + "`"
		}
	}
	return "(not in the golden listing)"
}

// constBank returns constant bank n of kernel name's cubin: the kernel's
// own section (.nv.constant<n>.<name>: ptxas's BRX jump tables) or else
// the module's (.nv.constant<n>: module constants).
func constBank(t *testing.T, file, name string, sm, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpus.Dir, "cubin", fmt.Sprintf("%s.sm_%d.cubin", file, sm)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cubin.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Section(fmt.Sprintf(".nv.constant%d.%s", n, name))
	if s == nil {
		s = c.Section(fmt.Sprintf(".nv.constant%d", n))
	}
	if s == nil {
		t.Fatalf("%s sm_%d: no constant bank %d", file, sm, n)
	}
	return s.Data
}

// checkPoison fails the test when a word of out from index from on is no
// longer the poison value: the kernel wrote past its bound.
func checkPoison(t *testing.T, what string, out []uint32, from int) {
	t.Helper()
	for i := from; i < len(out); i++ {
		if out[i] != 0x7fc0dead {
			t.Fatalf("%s: out[%d] = %#x written past the bound %d", what, i, out[i], from)
		}
	}
}

// TestSimPtxasSwitch8 runs ptxas's switch8 kernel: a BRX jump table over
// x & 7 with eight case bodies, every lane of a warp taking its own case
// (the warp splits eight ways and joins at the store); blocks of 1, 7,
// 129 and 1000 threads. Bit for bit against Go.
func TestSimPtxasSwitch8(t *testing.T) { corpus.ForSMs(t, simPtxasSwitch8) }

func simPtxasSwitch8(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(40, 41))
	table := constBank(t, "control", "switch8", sm, 2)
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, n)
		for i := range x {
			x[i] = r.Uint32() >> r.IntN(32)
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n+32), 0)
		launchCorpus(t, "control", "switch8", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao),
			Banks: map[uint8][]byte{2: table}, Poison: true})
		out := simWords(m.Bytes("out"))
		for i, v := range x {
			q := v >> 3
			want := [8]uint32{q + 11, q * 3, q ^ 0x55aa, q << 5, 100 - q, uint32(bits.OnesCount32(v)), ^q, uint32(i)}[v&7]
			if out[i] != want {
				t.Fatalf("n=%d: switch8(%#x) lane %d = %#x, want %#x", n, v, i, out[i], want)
			}
		}
		checkPoison(t, fmt.Sprint("switch8 n=", n), out, n)
	}
}

// TestSimPtxasWarpVote runs ptxas's warp_vote kernel (VOTE.ANY ballots,
// VOTEU of the active mask, the any/all/uni predicates and a ballot
// restricted to a member mask) on three full warps whose predicates are
// mixed, all true and all false. Bit for bit against Go.
func TestSimPtxasWarpVote(t *testing.T) { corpus.ForSMs(t, simPtxasWarpVote) }

func simPtxasWarpVote(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(42, 43))
	const n, th = 96, 1 << 31
	x := make([]uint32, n)
	for i := range x {
		switch i / 32 {
		case 0:
			x[i] = r.Uint32() // mixed
		case 1:
			x[i] = th + 1 + r.Uint32N(th-1) // all above
		default:
			x[i] = r.Uint32N(th + 1) // none above
		}
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n), 0)
	launchCorpus(t, "reduce", "warp_vote", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao, uint32(th)), Poison: true})
	out := simWords(m.Bytes("out"))
	for w := 0; w < n/32; w++ {
		var ballot uint32
		for l := 0; l < 32; l++ {
			if x[32*w+l] > th {
				ballot |= 1 << l
			}
		}
		flags := uint32(0)
		if ballot != 0 {
			flags |= 1
		}
		if ballot == 0xffffffff {
			flags |= 2
		}
		if ballot == 0 || ballot == 0xffffffff {
			flags |= 4
		}
		want := (flags | uint32(bits.OnesCount32(ballot))<<8) ^ ballot + 0xffffffff + ballot&0xffff
		for l := 0; l < 32; l++ {
			if got := out[32*w+l]; got != want {
				t.Fatalf("warp %d lane %d: %#x, want %#x (ballot %#x)", w, l, got, want, ballot)
			}
		}
	}
}

// TestSimPtxasWarpMatch runs ptxas's warp_match kernel (MATCH.ANY on 32
// and 64 bits, match.all built from it) on warps of random values in 0..7
// and on a warp whose lanes all hold one value. Bit for bit against Go.
func TestSimPtxasWarpMatch(t *testing.T) { corpus.ForSMs(t, simPtxasWarpMatch) }

func simPtxasWarpMatch(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(44, 45))
	const n = 96
	x := make([]uint32, n)
	same := r.Uint32()
	for i := range x {
		x[i] = r.Uint32()
		if i >= 64 {
			x[i] = same&7 | r.Uint32()&^7 // the kernel compares x & 7
		}
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(4*n), 0)
	launchCorpus(t, "reduce", "warp_match", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
	out := simWords(m.Bytes("out"))
	for i := range x {
		w := i &^ 31
		var any uint32
		for l := 0; l < 32; l++ {
			if x[w+l]&7 == x[i]&7 {
				any |= 1 << l
			}
		}
		all, flags := uint32(0), uint32(0)
		if any == 0xffffffff {
			all, flags = any, 3
		}
		if got, want := [4]uint32(out[4*i:]), [4]uint32{any, all, any, flags}; got != want {
			t.Fatalf("lane %d (x&7 = %d): %#x, want %#x", i, x[i]&7, got, want)
		}
	}
}

// TestSimPtxasBlockSum runs ptxas's block_sum kernel: shuffles down within
// warps, partial sums through shared memory and a barrier, an inclusive
// scan with shuffles up, and one RED.ADD per block into a random initial
// value; n of 1, 7, 129 and 1000 with a last, idle block. The final memory
// word is compared bit for bit with Go's sum.
func TestSimPtxasBlockSum(t *testing.T) { corpus.ForSMs(t, simPtxasBlockSum) }

func simPtxasBlockSum(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(46, 47))
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, n)
		want := r.Uint32()
		init := want
		for i := range x {
			x[i] = r.Uint32()
			want += x[i]
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", []uint32{init, 0x7fc0dead}, 0)
		launchCorpus(t, "reduce", "block_sum", sm, Config{Grid: [3]int{(n+255)/256 + 1}, Block: [3]int{256},
			SharedBytes: 32, Memory: m, Params: params(ax, ay, uint32(n)), Poison: true})
		out := simWords(m.Bytes("y"))
		if out[0] != want {
			t.Fatalf("n=%d: block_sum = %#x, want %#x", n, out[0], want)
		}
		checkPoison(t, fmt.Sprint("block_sum n=", n), out, 1)
	}
}

// TestSimPtxasRowSum runs ptxas's row_sum kernel (a loop whose bound,
// stride and row base live on the uniform datapath, a guarded ragged last
// trip, a butterfly reduction): block b sums row b of a matrix with
// leading dimension ld > n. Bit for bit against Go.
func TestSimPtxasRowSum(t *testing.T) { corpus.ForSMs(t, simPtxasRowSum) }

func simPtxasRowSum(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(48, 49))
	const rows = 3
	for _, n := range []int{1, 7, 129, 1000} {
		ld := n + r.IntN(9)
		x := make([]uint32, rows*ld)
		for i := range x {
			x[i] = r.Uint32()
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(rows+1), 0)
		launchCorpus(t, "uniform", "row_sum", sm, Config{Grid: [3]int{rows}, Block: [3]int{32}, Memory: m,
			Params: params(ax, ay, uint32(n), uint32(ld)), Poison: true})
		out := simWords(m.Bytes("y"))
		for b := 0; b < rows; b++ {
			var want uint32
			for j := 0; j < n; j++ {
				want += x[b*ld+j]
			}
			if out[b] != want {
				t.Fatalf("n=%d ld=%d: row %d sum = %#x, want %#x", n, ld, b, out[b], want)
			}
		}
		checkPoison(t, fmt.Sprint("row_sum n=", n), out, rows)
	}
}

// TestSimPtxasTileIndex runs ptxas's tile_index kernel: tile bounds from
// block indices and parameters on the uniform datapath (shifts, min,
// selects), a coefficient read from the module's constant bank (c[0x3],
// fixed and indexed), and a per-lane copy with clamped ragged edges; rows
// the tiles skip must stay untouched. Bit for bit against Go.
func TestSimPtxasTileIndex(t *testing.T) { corpus.ForSMs(t, simPtxasTileIndex) }

func simPtxasTileIndex(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(50, 51))
	coef := [16]uint32{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597}
	bank := constBank(t, "uniform", "tile_index", sm, 3)
	for _, c := range []struct{ rows, cols, shift int }{{1, 1, 4}, {7, 7, 5}, {129, 33, 4}, {40, 1000, 6}} {
		x := make([]uint32, c.rows*c.cols)
		for i := range x {
			x[i] = r.Uint32()
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(len(x)), 0)
		gx, gy := (c.rows+1<<c.shift-1)>>c.shift+1, (c.cols+31)/32
		shift := uint32(c.shift) | r.Uint32()&^7 // the kernel takes shift & 7
		launchCorpus(t, "uniform", "tile_index", sm, Config{Grid: [3]int{gx, gy}, Block: [3]int{32}, Memory: m,
			Params: params(ax, ay, uint32(c.rows), uint32(c.cols), shift), Banks: map[uint8][]byte{3: bank}, Poison: true})
		want := poisonWords(len(x))
		for bx := 0; bx < gx; bx++ {
			for by := 0; by < gy; by++ {
				rs, cs := bx<<c.shift, by*32
				k := uint32(5)
				if (bx^by)&1 == 0 {
					k = 3
				}
				k = k*coef[2] + coef[by&15]
				for row := min(rs, c.rows); row < min(rs+16, c.rows); row++ {
					for col := cs; col < min(cs+32, c.cols); col++ {
						want[row*c.cols+col] = x[row*c.cols+col]*k + uint32(row)
					}
				}
			}
		}
		out := simWords(m.Bytes("y"))
		for i := range want {
			if out[i] != want[i] {
				t.Fatalf("%dx%d shift %d: y[%d][%d] = %#x, want %#x", c.rows, c.cols, c.shift, i/c.cols, i%c.cols, out[i], want[i])
			}
		}
	}
}

// TestSimPtxasSharedForms runs ptxas's shared_forms kernel: each thread
// stores its 16 bytes to its shared slot (STS.128), reads its partner's
// (tid^31) slot back with LDS.64, LDS, LDS.U16, LDS.S8 and LDS.64 again,
// rewrites its own slot with STS.U8, STS.U16, STS and STS.64 (leaving byte
// 1 as it was), and after a barrier returns the partner's rewritten slot
// plus the first two words it read. Bit for bit, outputs poisoned.
func TestSimPtxasSharedForms(t *testing.T) { corpus.ForSMs(t, simPtxasSharedForms) }

func simPtxasSharedForms(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(52, 53))
	const n = 64
	x := make([]uint32, 4*n)
	for i := range x {
		x[i] = r.Uint32()
	}
	m := NewMemory()
	ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(4*n+4), 0)
	launchCorpus(t, "uniform", "shared_forms", sm, Config{Block: [3]int{n}, SharedBytes: 4096, Memory: m, Params: params(ax, ay), Poison: true})
	// the reference: slots of 16 bytes, phase by phase
	slot := make([][4]uint32, n)
	for th := range slot {
		copy(slot[th][:], x[4*th:4*th+4])
	}
	type read struct{ w0, w1, w2, u16, s8 uint32 }
	rd := make([]read, n)
	for th := range rd {
		p := slot[th^31]
		rd[th] = read{p[0], p[1], p[2], p[3] & 0xffff, uint32(int32(int8(p[3] >> 16)))}
	}
	for th := range slot {
		s := &slot[th]
		s[0] = s[0]&0x0000ff00 | rd[th].s8&0xff | rd[th].u16<<16
		s[1] = rd[th].w2
		s[2], s[3] = rd[th].w0, rd[th].w1
	}
	out := simWords(m.Bytes("y"))
	for th := 0; th < n; th++ {
		p := slot[th^31]
		want := [4]uint32{p[0] + rd[th].w0, p[1] + rd[th].w1, p[2], p[3]}
		for k := range want {
			if out[4*th+k] != want[k] {
				t.Fatalf("thread %d word %d: %#x, want %#x", th, k, out[4*th+k], want[k])
			}
		}
	}
	checkPoison(t, "shared_forms", out, 4*n)
}

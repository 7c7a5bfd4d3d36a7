package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
	"unsafe"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// GatherProblem is one row gather (or row scatter) the job and the
// benchmarks run: a table of TableRows × Cols elements of DType and Lanes
// row indices (s32), uniformly random over the table, or over its first Hot
// rows when Hot > 0 (the high-contention variant).
type GatherProblem struct {
	DType     tile.DType
	TableRows int
	Cols      int
	Lanes     int
	Hot       int
}

// String is "f32 65536x256 lanes 65536 random".
func (p GatherProblem) String() string {
	dist := "random"
	if p.Hot > 0 {
		dist = fmt.Sprintf("hot%d", p.Hot)
	}
	return fmt.Sprintf("%v %dx%d lanes %d %s", p.DType, p.TableRows, p.Cols, p.Lanes, dist)
}

// Bytes is the memory traffic of one gather: the rows read, the rows
// written and the indices.
func (p GatherProblem) Bytes() float64 {
	return 2*float64(p.Lanes*p.Cols*p.DType.Size()) + 4*float64(p.Lanes)
}

// GatherSetup holds the buffers of one row-gather problem.
type GatherSetup struct {
	P     GatherProblem
	Table *runtime.Buffer
	Idx   ops.Tile
	Dst   ops.Tile
}

// randomRows returns an s32 index buffer of p.Lanes random rows.
func randomRows(ctx context.Context, rt *runtime.Runtime, rng *rand.Rand, p GatherProblem) (*runtime.Buffer, error) {
	n := p.TableRows
	if p.Hot > 0 {
		n = p.Hot
	}
	v := make([]int32, p.Lanes)
	for i := range v {
		v[i] = int32(rng.IntN(n))
	}
	b, err := rt.Alloc(tile.S32, p.Lanes)
	if err != nil {
		return nil, err
	}
	return b, runtime.WriteRaw(ctx, b, v)
}

// NewGatherSetup allocates a random table, random indices and the
// destination.
func NewGatherSetup(ctx context.Context, rt *runtime.Runtime, p GatherProblem, seed uint64) (*GatherSetup, error) {
	if err := checkGatherProblem("bench: gather", rt, p); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a7e))
	table, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, p.TableRows, p.Cols)
	if err != nil {
		return nil, err
	}
	idx, err := randomRows(ctx, rt, rng, p)
	if err != nil {
		return nil, err
	}
	dst, err := rt.Alloc(p.DType, p.Lanes, p.Cols)
	if err != nil {
		return nil, err
	}
	return &GatherSetup{P: p, Table: table, Idx: ops.DenseTile(idx), Dst: ops.DenseTile(dst)}, nil
}

// Run gathers the rows.
func (s *GatherSetup) Run(ctx context.Context, rt *runtime.Runtime) error {
	return ops.MGather(ctx, rt, s.Dst, s.Table, s.Idx, nil)
}

// Close releases the buffers.
func (s *GatherSetup) Close() {
	s.Table.Close()
	s.Idx.Buf.Close()
	s.Dst.Buf.Close()
}

// Check runs the reference on host copies and returns the fraction of
// destination bytes that differ (0 when bit-exact).
func (s *GatherSetup) Check(ctx context.Context) (float64, error) {
	table, idx, got, err := readAll(ctx, s.Table, s.Idx.Buf, s.Dst.Buf)
	if err != nil {
		return 0, err
	}
	want := make([]byte, len(got))
	err = fallback.GatherRef(&fallback.GatherArgs{Mode: fallback.IndexRows, Mem: table, MemRows: s.P.TableRows,
		Idx: fallback.TileData{Tile: s.Idx.Desc, Data: idx}, Dst: fallback.TileData{Tile: s.Dst.Desc, Data: want}})
	if err != nil {
		return 0, err
	}
	return diffFraction(got, want), nil
}

func readAll(ctx context.Context, bufs ...*runtime.Buffer) (a, b, c []byte, err error) {
	out := make([][]byte, 3)
	for i, buf := range bufs {
		out[i] = make([]byte, buf.Bytes())
		if err := buf.Read(ctx, 0, out[i]); err != nil {
			return nil, nil, nil, err
		}
	}
	return out[0], out[1], out[2], nil
}

func diffFraction(got, want []byte) float64 {
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			bad++
		}
	}
	return float64(bad) / float64(max(1, len(got)))
}

// GatherCASProblem is one gather-CAS: Lanes lanes (a Lanes/1024 × 1024
// tile) of a 32-bit transfer type at random distinct aligned addresses of a
// memory of MemBytes, half of them expecting the value they find (and so
// swapping).
type GatherCASProblem struct {
	MemBytes int
	Lanes    int
}

// String is "b32 mem 64MiB lanes 1048576".
func (p GatherCASProblem) String() string {
	return fmt.Sprintf("b32 mem %dMiB lanes %d", p.MemBytes>>20, p.Lanes)
}

// GatherCASSetup holds the buffers of one gather-CAS problem.
type GatherCASSetup struct {
	P                               GatherCASProblem
	Mem                             *runtime.Buffer
	Idx, Expected, Replacement, Dst ops.Tile
	initial                         []byte
	odd                             bool
}

// NewGatherCASSetup allocates the memory, the index, expected and
// replacement tiles and the destination.
func NewGatherCASSetup(ctx context.Context, rt *runtime.Runtime, p GatherCASProblem, seed uint64) (*GatherCASSetup, error) {
	if err := checkSetup("bench: gather_cas", rt, "MemBytes", p.MemBytes); err != nil {
		return nil, err
	}
	if err := checkSetup("bench: gather_cas", rt, "Lanes", p.Lanes); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0xca5))
	words := p.MemBytes / 4
	mem := make([]uint32, words)
	for i := range mem {
		mem[i] = rng.Uint32()
	}
	cols := min(p.Lanes, 1024)
	rows := p.Lanes / cols
	idx, exp, rep := make([]uint32, p.Lanes), make([]uint32, p.Lanes), make([]uint32, p.Lanes)
	seen := map[int]bool{}
	for l := range idx {
		w := rng.IntN(words)
		for seen[w] {
			w = rng.IntN(words)
		}
		seen[w] = true
		idx[l] = uint32(4 * w)
		exp[l] = rng.Uint32()
		if l%2 == 0 {
			exp[l] = mem[w]
		}
		rep[l] = rng.Uint32()
	}
	s := &GatherCASSetup{P: p}
	var err error
	alloc := func(d tile.DType, v []uint32, shape ...int) *runtime.Buffer {
		if err != nil {
			return nil
		}
		var b *runtime.Buffer
		if b, err = rt.Alloc(d, shape...); err == nil {
			err = runtime.WriteRaw(ctx, b, v)
		}
		return b
	}
	s.Mem = alloc(tile.U32, mem, words)
	s.Idx = ops.DenseTile(alloc(tile.U32, idx, rows, cols))
	s.Expected = ops.DenseTile(alloc(tile.U32, exp, rows, cols))
	s.Replacement = ops.DenseTile(alloc(tile.U32, rep, rows, cols))
	s.Dst = ops.DenseTile(alloc(tile.U32, make([]uint32, p.Lanes), rows, cols))
	if err != nil {
		return nil, err
	}
	s.initial = make([]byte, p.MemBytes)
	return s, s.Mem.Read(ctx, 0, s.initial)
}

// Run performs the compare-and-swaps. Runs alternate the expected and
// replacement tiles, so the lanes that swapped in one run swap back in the
// next: every run has the same half of its lanes succeeding.
func (s *GatherCASSetup) Run(ctx context.Context, rt *runtime.Runtime) error {
	exp, rep := s.Expected, s.Replacement
	if s.odd {
		exp, rep = rep, exp
	}
	s.odd = !s.odd
	return ops.MGatherCAS(ctx, rt, s.Dst, s.Mem, s.Idx, exp, rep, nil)
}

// Bytes is the traffic of one run: each lane reads its index, expected and
// replacement values, reads and may write its word, and writes the
// destination.
func (p GatherCASProblem) Bytes() float64 { return float64(p.Lanes) * 4 * 5 }

// Close releases the buffers.
func (s *GatherCASSetup) Close() {
	for _, b := range []*runtime.Buffer{s.Mem, s.Idx.Buf, s.Expected.Buf, s.Replacement.Buf, s.Dst.Buf} {
		b.Close()
	}
}

// Check restores the initial memory, runs once, and compares memory and
// destination with the reference run on the initial memory: the fraction
// of differing bytes.
func (s *GatherCASSetup) Check(ctx context.Context, rt *runtime.Runtime) (float64, error) {
	if err := s.Mem.Write(ctx, 0, s.initial); err != nil {
		return 0, err
	}
	s.odd = false
	if err := s.Run(ctx, rt); err != nil {
		return 0, err
	}
	idx, exp, rep, err := readAll(ctx, s.Idx.Buf, s.Expected.Buf, s.Replacement.Buf)
	if err != nil {
		return 0, err
	}
	gotMem, gotDst := make([]byte, s.Mem.Bytes()), make([]byte, s.Dst.Buf.Bytes())
	if err := s.Mem.Read(ctx, 0, gotMem); err != nil {
		return 0, err
	}
	if err := s.Dst.Buf.Read(ctx, 0, gotDst); err != nil {
		return 0, err
	}
	mem := alignedCopy(s.initial)
	want := make([]byte, len(gotDst))
	td := func(t ops.Tile, b []byte) fallback.TileData { return fallback.TileData{Tile: t.Desc, Data: b} }
	if err := fallback.GatherCASRef(&fallback.GatherCASArgs{Mem: mem, Idx: td(s.Idx, idx), Expected: td(s.Expected, exp),
		Replacement: td(s.Replacement, rep), Dst: td(s.Dst, want)}); err != nil {
		return 0, err
	}
	return math.Max(diffFraction(gotMem, mem), diffFraction(gotDst, want)), nil
}

// alignedCopy copies b into 8-byte aligned memory, as the atomic fallback
// requires.
func alignedCopy(b []byte) []byte {
	w := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(b))
	copy(out, b)
	return out
}

// GatherSizes are the row-gather problems of each -size (64 MiB tables of
// 1 KiB rows at large).
var GatherSizes = map[string]GatherProblem{
	"small":  {DType: tile.F32, TableRows: 1024, Cols: 256, Lanes: 1024},
	"medium": {DType: tile.F32, TableRows: 16384, Cols: 256, Lanes: 16384},
	"large":  {DType: tile.F32, TableRows: 65536, Cols: 256, Lanes: 65536},
}

// GatherCASSizes are the gather-CAS problems of each -size.
var GatherCASSizes = map[string]GatherCASProblem{
	"small":  {MemBytes: 1 << 20, Lanes: 16384},
	"medium": {MemBytes: 16 << 20, Lanes: 1 << 18},
	"large":  {MemBytes: 64 << 20, Lanes: 1 << 20},
}

func init() {
	RegisterJob(Job{Name: "mgather", Order: 40, Run: runGatherJob})
	RegisterJob(Job{Name: "mgather_cas", Order: 42, Run: runGatherCASJob})
}

func explainName(ex ops.Explanation, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	if k := ex.Chosen(); k != nil {
		return k.Name
	}
	return "none"
}

func runGatherJob(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error) {
	var out []Result
	for _, hot := range []int{0, 16} {
		p := GatherSizes[cfg.Size]
		p.Hot = hot
		s, err := NewGatherSetup(ctx, rt, p, 1)
		if err != nil {
			return out, err
		}
		ex, exErr := ops.ExplainMGather(rt, s.Dst, s.Table, s.Idx, nil)
		r := Result{Op: "mgather", Problem: p.String(), Unit: "GB/s", Kernel: explainName(ex, exErr)}
		if cfg.Explain {
			r.Explain = ex.String()
		}
		med, sim, err := MedianOn(rt, func() error { return s.Run(ctx, rt) }, 3, 300*time.Millisecond)
		if err == nil {
			r.MaxErr, err = s.Check(ctx)
		}
		s.Close()
		if err != nil {
			return out, err
		}
		r.OK = r.MaxErr <= r.Tol
		r.Seconds = med.Seconds()
		r.Sim = sim
		r.Value = p.Bytes() / med.Seconds() / 1e9
		out = append(out, r)
	}
	return out, nil
}

func runGatherCASJob(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error) {
	p := GatherCASSizes[cfg.Size]
	s, err := NewGatherCASSetup(ctx, rt, p, 2)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ex, exErr := ops.ExplainMGatherCAS(rt, s.Dst, s.Mem, s.Idx, s.Expected, s.Replacement, nil)
	r := Result{Op: "mgather_cas", Problem: p.String(), Unit: "GB/s", Kernel: explainName(ex, exErr)}
	if cfg.Explain {
		r.Explain = ex.String()
	}
	med, sim, err := MedianOn(rt, func() error { return s.Run(ctx, rt) }, 3, 300*time.Millisecond)
	if err != nil {
		return nil, err
	}
	if r.MaxErr, err = s.Check(ctx, rt); err != nil {
		return nil, err
	}
	r.OK = r.MaxErr <= r.Tol
	r.Seconds = med.Seconds()
	r.Sim = sim
	r.Value = p.Bytes() / med.Seconds() / 1e9
	return []Result{r}, nil
}

// checkGatherProblem is checkSetup for a gather or scatter: the table and
// the gathered rows, and Hot, if set, within the table.
func checkGatherProblem(op string, rt *runtime.Runtime, p GatherProblem) error {
	if err := checkSetup(op, rt, "TableRows, Cols", p.TableRows, p.Cols); err != nil {
		return err
	}
	if err := checkSetup(op, rt, "Lanes, Cols", p.Lanes, p.Cols); err != nil {
		return err
	}
	if p.Hot < 0 || p.Hot > p.TableRows {
		return tile.Errorf(tile.ErrShape, op, "Hot", "%d is outside [0, TableRows %d]", p.Hot, p.TableRows)
	}
	return nil
}

package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// ScatterSetup holds the buffers of one row scatter-add problem (a
// GatherProblem read the other way: Lanes source rows added into random
// table rows).
type ScatterSetup struct {
	P     GatherProblem
	Table *runtime.Buffer
	Idx   ops.Tile
	Src   ops.Tile
	Opt   ops.ScatterOptions
}

// ScatterBytes is the memory traffic of one scatter-add: the source rows
// and indices read, and every updated element read and written.
func (p GatherProblem) ScatterBytes() float64 {
	return 3*float64(p.Lanes*p.Cols*p.DType.Size()) + 4*float64(p.Lanes)
}

// NewScatterSetup allocates a random table, random sources and indices, for
// an unordered scatter-add.
func NewScatterSetup(ctx context.Context, rt *runtime.Runtime, p GatherProblem, seed uint64) (*ScatterSetup, error) {
	if err := checkGatherProblem("bench: scatter", rt, p); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x5ca7))
	table, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, p.TableRows, p.Cols)
	if err != nil {
		return nil, err
	}
	src, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, p.Lanes, p.Cols)
	if err != nil {
		return nil, err
	}
	idx, err := randomRows(ctx, rt, rng, p)
	if err != nil {
		return nil, err
	}
	return &ScatterSetup{P: p, Table: table, Idx: ops.DenseTile(idx), Src: ops.DenseTile(src), Opt: ops.ScatterOptions{Op: ops.ScatterAdd}}, nil
}

// NewScatterElementsSetup is NewScatterSetup for an element-mode
// scatter-add: each of the Lanes×Cols source elements goes to its own
// uniformly random element of the table (p.Hot is ignored). ScatterBytes is
// its traffic too: every source element and the updated element read, the
// updated element written, and one s32 index per element (counted as
// 4·Lanes·Cols bytes, not 4·Lanes: use ElementScatterBytes).
func NewScatterElementsSetup(ctx context.Context, rt *runtime.Runtime, p GatherProblem, seed uint64) (*ScatterSetup, error) {
	if err := checkGatherProblem("bench: scatter_elements", rt, p); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x5ca8))
	table, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, p.TableRows, p.Cols)
	if err != nil {
		return nil, err
	}
	src, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, p.Lanes, p.Cols)
	if err != nil {
		table.Close()
		return nil, err
	}
	v := make([]int32, p.Lanes*p.Cols)
	for i := range v {
		v[i] = int32(rng.IntN(p.TableRows * p.Cols))
	}
	idx, err := rt.Alloc(tile.S32, p.Lanes, p.Cols)
	if err == nil {
		err = runtime.WriteRaw(ctx, idx, v)
	}
	if err != nil {
		table.Close()
		src.Close()
		return nil, err
	}
	return &ScatterSetup{P: p, Table: table, Idx: ops.DenseTile(idx), Src: ops.DenseTile(src),
		Opt: ops.ScatterOptions{Op: ops.ScatterAdd, Mode: ops.IndexElements}}, nil
}

// ElementScatterBytes is the memory traffic of an element-mode scatter-add:
// per element, the source read, the index read, the destination read and
// written.
func (p GatherProblem) ElementScatterBytes() float64 {
	return float64(p.Lanes*p.Cols) * float64(3*p.DType.Size()+4)
}

// Run scatter-adds the source rows into the table.
func (s *ScatterSetup) Run(ctx context.Context, rt *runtime.Runtime) error {
	return ops.MScatter(ctx, rt, s.Table, s.Idx, s.Src, &s.Opt)
}

// Close releases the buffers.
func (s *ScatterSetup) Close() {
	s.Table.Close()
	s.Idx.Buf.Close()
	s.Src.Buf.Close()
}

// Check runs one more scatter-add, and the reference on a copy of the table
// as it was before, and returns the max relative error (floor 1): unordered
// float adds may round in another order than the reference's.
func (s *ScatterSetup) Check(ctx context.Context, rt *runtime.Runtime) (float64, error) {
	before, idx, src, err := readAll(ctx, s.Table, s.Idx.Buf, s.Src.Buf)
	if err != nil {
		return 0, err
	}
	if err := s.Run(ctx, rt); err != nil {
		return 0, err
	}
	got := make([]float32, s.Table.Len())
	if err := s.Table.ReadFloat32(ctx, got); err != nil {
		return 0, err
	}
	err = fallback.ScatterRef(&fallback.ScatterArgs{Mode: fallback.IndexRows, Op: fallback.ScatterAdd, Mem: before, MemRows: s.P.TableRows,
		Idx: fallback.TileData{Tile: s.Idx.Desc, Data: idx}, Src: fallback.TileData{Tile: s.Src.Desc, Data: src}})
	if err != nil {
		return 0, err
	}
	want := make([]float32, len(got))
	engine.DecodeFloat32(s.P.DType, want, before)
	return MaxRelErr(got, want, 1), nil
}

func init() {
	RegisterJob(Job{Name: "mscatter", Order: 41, Run: runScatterJob})
}

func runScatterJob(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error) {
	var out []Result
	type variant struct {
		hot int
		oob ops.OOB
	}
	vs := []variant{{0, ops.OOBError}, {16, ops.OOBError}}
	if rt.Device().GPU() { // the policy the SM86 SASS scatter-add covers (no preflight)
		vs = append(vs, variant{0, ops.OOBSkip})
	}
	for _, v := range vs {
		p := GatherSizes[cfg.Size]
		p.Hot = v.hot
		s, err := NewScatterSetup(ctx, rt, p, 3)
		if err != nil {
			return out, err
		}
		s.Opt.OOB = v.oob
		name := "add " + p.String()
		if v.oob != ops.OOBError {
			name += " oob " + v.oob.String()
		}
		ex, exErr := ops.ExplainMScatter(rt, s.Table, s.Idx, s.Src, &s.Opt)
		r := Result{Op: "mscatter", Problem: name, Unit: "GB/s", Kernel: explainName(ex, exErr), Tol: 1e-4}
		if cfg.Explain {
			r.Explain = ex.String()
		}
		med, sim, err := MedianOn(rt, func() error { return s.Run(ctx, rt) }, 3, 300*time.Millisecond)
		if err == nil {
			r.MaxErr, err = s.Check(ctx, rt)
		}
		s.Close()
		if err != nil {
			return out, err
		}
		r.OK = r.MaxErr <= r.Tol && !math.IsNaN(r.MaxErr)
		r.Seconds = med.Seconds()
		r.Sim = sim
		r.Value = p.ScatterBytes() / med.Seconds() / 1e9
		out = append(out, r)
	}
	return out, nil
}

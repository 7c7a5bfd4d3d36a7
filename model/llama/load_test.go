package llama_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	_ "github.com/tcrt-go/tcrt/runtime/sim" // the simulated GPU backend
	"github.com/tcrt-go/tcrt/tile"
)

func openRT(t *testing.T, opts runtime.Options) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// TestLoad uploads random checkpoints to the CPU and the simulated GPU,
// as stored and converted, and reads every buffer back: each holds the
// generator's values rounded to the checkpoint's dtype, then to the
// buffer's, bit for bit.
func TestLoad(t *testing.T) {
	cfg := llamatest.Tiny()
	cfg.ModelType, cfg.QKVBias = "qwen2", true
	want, _ := llamatest.RandomWeights(cfg, 9)
	for _, backend := range []runtime.BackendKind{runtime.BackendCPU, runtime.BackendSim} {
		rt := openRT(t, runtime.Options{Backend: backend})
		for _, stored := range []tile.DType{tile.F32, tile.BF16} {
			dir := writeTiny(t, cfg, stored, &llamatest.Options{Shards: 2})
			for _, as := range []tile.DType{tile.Invalid, tile.F32, tile.F16, tile.BF16} {
				t.Run(fmt.Sprintf("%s/%v/as-%v", backend, stored, as), func(t *testing.T) {
					m, err := llama.Load(context.Background(), rt, dir, &llama.LoadOptions{DType: as, KeepSeparate: true})
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(m.Config(), cfg) {
						t.Fatalf("config %+v", m.Config())
					}
					bufDT := as
					if as == tile.Invalid {
						bufDT = stored
					}
					ws := m.Weights()
					n := 0
					err = llama.EachWeight(cfg, &ws, func(name string, shape []int, b **runtime.Buffer) error {
						n++
						if (*b).DType() != bufDT || !reflect.DeepEqual((*b).Shape(), shape) {
							return fmt.Errorf("%s: buffer %v %v", name, (*b).DType(), (*b).Shape())
						}
						got := make([]float32, (*b).Len())
						if err := (*b).ReadFloat32(context.Background(), got); err != nil {
							return err
						}
						exp := llamatest.Round(bufDT, llamatest.Round(stored, want[name]))
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(exp[i]) {
								return fmt.Errorf("%s[%d] = %v, want %v", name, i, got[i], exp[i])
							}
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if n != len(want) {
						t.Fatalf("%d buffers for %d weights", n, len(want))
					}
					if got, want := m.WeightBytes(), cfg.NumParams()*bufDT.Size(); got != want {
						t.Fatalf("WeightBytes %d, want %d", got, want)
					}
					live := rt.Stats().LiveBuffers
					if live != int64(n) {
						t.Fatalf("%d live buffers for %d weights", live, n)
					}
					if err := m.Close(); err != nil {
						t.Fatal(err)
					}
					if err := m.Close(); err != nil {
						t.Fatalf("second Close: %v", err)
					}
					if live := rt.Stats().LiveBuffers; live != 0 {
						t.Fatalf("%d buffers live after Close", live)
					}
				})
			}
		}
	}
}

// TestLoadTied: the tied LM head is the embedding's buffer, closed once.
func TestLoadTied(t *testing.T) {
	cfg := llamatest.Tiny()
	cfg.TieWordEmbeddings = true
	dir := writeTiny(t, cfg, tile.F16, nil)
	rt := openRT(t, runtime.Options{Backend: runtime.BackendCPU})
	m, err := llama.Load(context.Background(), rt, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := m.Weights(); w.LMHead != w.Embed || w.LMHead == nil {
		t.Fatal("tied LM head is not the embedding buffer")
	}
	if got, want := m.WeightBytes(), cfg.NumParams()*2; got != want {
		t.Fatalf("tied WeightBytes %d, want %d", got, want)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if st := rt.Stats(); st.LiveBuffers != 0 || st.Frees != st.Allocs {
		t.Fatalf("after Close: %+v", st)
	}
}

// TestLoadErrors: every failure is typed and leaves no buffer behind.
func TestLoadErrors(t *testing.T) {
	cfg := llamatest.Tiny()
	dir := writeTiny(t, cfg, tile.BF16, nil)
	rt := openRT(t, runtime.Options{Backend: runtime.BackendCPU})
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	small := openRT(t, runtime.Options{Backend: runtime.BackendCPU, MemoryLimit: 100_000})
	closedRT, _ := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	closedRT.Close()
	cases := []struct {
		name string
		rt   *runtime.Runtime
		ctx  context.Context
		dir  string
		opts *llama.LoadOptions
		want error
	}{
		{"nil runtime", nil, ctx, dir, nil, tile.ErrArgument},
		{"nil ctx", rt, nil, dir, nil, tile.ErrArgument},
		{"closed runtime", closedRT, ctx, dir, nil, tile.ErrClosed},
		{"integer dtype", rt, ctx, dir, &llama.LoadOptions{DType: tile.S8}, tile.ErrDType},
		{"e4m3 dtype", rt, ctx, dir, &llama.LoadOptions{DType: tile.E4M3}, tile.ErrDType},
		{"bad dir", rt, ctx, t.TempDir(), nil, tile.ErrArgument},
		{"cancelled", rt, cancelled, dir, nil, context.Canceled},
		{"memory limit", small, ctx, dir, &llama.LoadOptions{DType: tile.F32}, tile.ErrOutOfMemory},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := llama.Load(c.ctx, c.rt, c.dir, c.opts)
			if !errors.Is(err, c.want) || m != nil {
				t.Fatalf("Load = %v, %v; want %v", m, err, c.want)
			}
			if c.rt != nil && c.rt != closedRT {
				if st := c.rt.Stats(); st.LiveBuffers != 0 {
					t.Fatalf("%d buffers left live", st.LiveBuffers)
				}
			}
		})
	}
	// The memory limit is hit part way: some weights were uploaded first
	// (on the CPU; a GPU backend's pool may refuse the first buffer, as
	// the simulated device does under TCRT_BACKEND=sim).
	if st := small.Stats(); st.Frees != st.Allocs || st.Allocs == 0 && small.Backend() == runtime.BackendCPU {
		t.Fatalf("memory-limit case: %+v", st)
	}
	var nilModel *llama.Model
	if err := nilModel.Close(); !errors.Is(err, tile.ErrArgument) {
		t.Fatalf("nil Close: %v", err)
	}
	if nilModel.Config().HiddenSize != 0 || nilModel.Weights().Embed != nil || nilModel.WeightBytes() != 0 {
		t.Fatal("nil getters")
	}
}

// TestLoadFused: by default each layer's q, k, v (and biases) and gate, up
// are uploaded into one buffer each, row blocks in that order, bit for bit;
// Weights() has those fields nil, and WeightBytes and Close cover the
// fused buffers.
func TestLoadFused(t *testing.T) {
	cfg := llamatest.Tiny()
	cfg.ModelType, cfg.QKVBias = "qwen2", true
	want, _ := llamatest.RandomWeights(cfg, 9)
	rt := openRT(t, runtime.Options{Backend: runtime.BackendCPU})
	dir := writeTiny(t, cfg, tile.F32, nil)
	for _, as := range []tile.DType{tile.Invalid, tile.BF16} {
		m, err := llama.Load(context.Background(), rt, dir, &llama.LoadOptions{DType: as})
		if err != nil {
			t.Fatal(err)
		}
		bufDT := as
		if as == tile.Invalid {
			bufDT = tile.F32
		}
		fl := m.FusedLayers()
		if len(fl) != cfg.NumLayers {
			t.Fatalf("%d fused layers", len(fl))
		}
		for l, f := range fl {
			p := llama.LayerPrefix(l)
			for _, c := range []struct {
				b     *runtime.Buffer
				parts []string
			}{
				{f.QKV, []string{"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"}},
				{f.QKVBias, []string{"self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"}},
				{f.GateUp, []string{"mlp.gate_proj.weight", "mlp.up_proj.weight"}},
			} {
				var exp []float32
				for _, n := range c.parts {
					exp = append(exp, want[p+n]...)
				}
				exp = llamatest.Round(bufDT, exp)
				got := make([]float32, c.b.Len())
				if c.b.DType() != bufDT || len(got) != len(exp) {
					t.Fatalf("layer %d %v: %v of %d elements, want %v of %d", l, c.parts, c.b.DType(), len(got), bufDT, len(exp))
				}
				if err := c.b.ReadFloat32(context.Background(), got); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(exp[i]) {
						t.Fatalf("layer %d %v [%d] = %v, want %v", l, c.parts, i, got[i], exp[i])
					}
				}
			}
			if w := m.Weights().Layers[l]; w.Q != nil || w.Gate != nil || w.VBias != nil || w.O == nil {
				t.Errorf("layer %d: fused fields are not nil, or o_proj is", l)
			}
		}
		if got, want := m.WeightBytes(), cfg.NumParams()*bufDT.Size(); got != want {
			t.Errorf("WeightBytes %d, want %d", got, want)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if live := rt.Stats().LiveBuffers; live != 0 {
			t.Fatalf("%d buffers live after Close", live)
		}
	}
}

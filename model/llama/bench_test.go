package llama_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkLoad measures Load of the Small model (about 2.6 M parameters)
// on the CPU: opening, validating, and copying (or converting) the weights
// into buffers; GB/s counts the checkpoint's weight bytes.
func BenchmarkLoad(b *testing.B) {
	cfg := llamatest.Small()
	for _, c := range []struct {
		name       string
		stored, as tile.DType
	}{
		{"bf16/small/cpu", tile.BF16, tile.Invalid},
		{"f32-to-bf16/small/cpu", tile.F32, tile.BF16},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := llamatest.WriteRandomCheckpoint(dir, cfg, c.stored, 1, nil); err != nil {
				b.Fatal(err)
			}
			rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			bytes := float64(cfg.NumParams() * c.stored.Size())
			b.ResetTimer()
			for b.Loop() {
				m, err := llama.Load(context.Background(), rt, dir, &llama.LoadOptions{DType: c.as})
				if err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
			b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// llama1B is the Llama 3.2 1B-shaped model of the decode and prefill
// benchmarks: random bf16 weights, generated once per process into a
// temporary directory (removed once loaded) and kept loaded on the CPU.
var llama1B = sync.OnceValues(func() (*llama.Model, error) {
	cfg := llamatest.Llama1B()
	need := uint64(cfg.NumParams() * 2)
	if avail := memAvailable(); avail != 0 && avail < need*2 {
		return nil, errSkip(fmt.Sprintf("%.1f GB of memory available; the 1B model needs about %.1f GB", float64(avail)/1e9, float64(need*2)/1e9))
	}
	dir, err := os.MkdirTemp("", "llama1b")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if free := freeDisk(dir); free != 0 && free < need+need/10 {
		return nil, errSkip(fmt.Sprintf("%.1f GB free in %s; the 1B checkpoint takes %.1f GB", float64(free)/1e9, dir, float64(need)/1e9))
	}
	if err := llamatest.WriteRandomCheckpoint(dir, cfg, tile.BF16, 1, nil); err != nil {
		return nil, err
	}
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	if err != nil {
		return nil, err
	}
	return llama.Load(context.Background(), rt, dir, nil)
})

// errSkip is a reason to skip rather than fail.
type errSkip string

func (e errSkip) Error() string { return string(e) }

func loadLlama1B(b *testing.B) *llama.Model {
	m, err := llama1B()
	var skip errSkip
	if errors.As(err, &skip) {
		b.Skip(skip)
	}
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// memAvailable is /proc/meminfo's MemAvailable in bytes (0 if unknown).
func memAvailable() uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// peakRSS is the process's peak resident set (VmHWM) in bytes, 0 if
// unknown.
func peakRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// copyGBs is the machine's copy bandwidth now: all cores copying disjoint
// slices of a 256 MiB buffer (past any last-level cache, as the weights
// are), bytes read plus written (the convention of bench's
// BenchmarkMemcpy), the median of 21 runs.
func copyGBs() float64 {
	const n = 256 << 20
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	p := goruntime.GOMAXPROCS(0)
	run := func() {
		var wg sync.WaitGroup
		for w := range p {
			lo, hi := w*n/p, (w+1)*n/p
			wg.Add(1)
			go func() { defer wg.Done(); copy(dst[lo:hi], src[lo:hi]) }()
		}
		wg.Wait()
	}
	run()
	rates := make([]float64, 21)
	for i := range rates {
		t := time.Now()
		run()
		rates[i] = 2 * n / time.Since(t).Seconds() / 1e9
	}
	slices.Sort(rates)
	return rates[len(rates)/2]
}

// BenchmarkLlamaDecode/bf16/llama1b/b<B>/cpu: one decode step of B
// sequences (16-token prompts, then growing) of the 1B-shaped model per
// iteration, sampling greedily. It reports tokens/s (aggregate), and
// bw-eff: the weight bytes a step reads (Model.WeightBytes) times steps/s
// over the copy bandwidth (copyGBs) measured after the timed loop, and the
// process's peak RSS during the timed loop over the weight and KV cache
// bytes (the KV cache counted as the runner's whole page pool, of which
// the benchmark touches a few pages).
func BenchmarkLlamaDecode(b *testing.B) {
	for _, batch := range []int{1, 8} {
		b.Run(fmt.Sprintf("bf16/llama1b/b%d/cpu", batch), func(b *testing.B) {
			m := loadLlama1B(b)
			cfg := m.Config()
			ctx := context.Background()
			const prompt, maxLen = 16, 1024
			r, err := llama.NewRunner(m, &llama.RunnerOptions{MaxSeqs: batch, MaxTokens: batch * prompt, MaxSeqLen: maxLen})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			work := make([]llama.Work, batch)
			start := func() {
				for i := range work {
					if work[i].Tokens != nil {
						r.FreeSequence(work[i].Seq)
					}
					work[i].Seq, _ = r.NewSequence()
					work[i].Tokens = make([]int32, prompt)
					for j := range work[i].Tokens {
						work[i].Tokens[j] = int32(1000*i + 7*j)
					}
				}
				if err := r.Step(ctx, work); err != nil {
					b.Fatal(err)
				}
				for i := range work {
					work[i].Tokens = []int32{int32(i)}
				}
			}
			start()
			// Peak RSS from here on: decoding, not the generator, the load
			// or an earlier run's copyGBs buffers, returned first (writing
			// 5 to clear_refs resets VmHWM; Linux ≥ 4.0).
			debug.FreeOSMemory()
			_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
			b.ResetTimer()
			for range b.N {
				if r.Len(work[0].Seq) >= maxLen {
					b.StopTimer()
					start()
					b.StartTimer()
				}
				if err := r.Step(ctx, work); err != nil {
					b.Fatal(err)
				}
				for i := range work {
					tok, err := r.Sample(ctx, i, llama.SampleOptions{}, 0)
					if err != nil {
						b.Fatal(err)
					}
					work[i].Tokens[0] = tok
				}
			}
			sec := b.Elapsed().Seconds()
			b.StopTimer()
			if hwm := peakRSS(); hwm > 0 {
				kv := 2 * cfg.NumLayers * r.Options().NumPages * r.Options().PageSize * cfg.NumKVHeads * cfg.HeadDim * r.Options().KVDType.Size()
				b.ReportMetric(float64(hwm)/float64(m.WeightBytes()+kv), "peak-rss/(weights+kv)")
			}
			steps := float64(b.N) / sec
			bw := copyGBs()
			b.ReportMetric(steps*float64(batch), "tokens/s")
			b.ReportMetric(float64(m.WeightBytes())*steps/1e9/bw, "bw-eff")
			b.ReportMetric(bw, "memcpy-GB/s")
		})
	}
}

// BenchmarkLlamaPrefill/bf16/llama1b/s512/cpu: the prefill of one
// 512-token prompt of the 1B-shaped model per iteration. GFLOP/s counts
// the projections and the MLP (2·params per token, the embedding aside),
// causal attention (4·headDim·heads per visible key per layer) and the LM
// head of the last token.
func BenchmarkLlamaPrefill(b *testing.B) {
	b.Run("bf16/llama1b/s512/cpu", func(b *testing.B) {
		m := loadLlama1B(b)
		ctx := context.Background()
		const s = 512
		cfg := m.Config()
		r, err := llama.NewRunner(m, &llama.RunnerOptions{MaxSeqs: 1, MaxTokens: s, MaxSeqLen: s})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		prompt := make([]int32, s)
		for i := range prompt {
			prompt[i] = int32(i * 37 % cfg.VocabSize)
		}
		H, I := cfg.HiddenSize, cfg.IntermediateSize
		qkvd := (cfg.NumHeads + 2*cfg.NumKVHeads) * cfg.HeadDim
		perTok := 2 * float64(cfg.NumLayers) * float64(H*qkvd+cfg.NumHeads*cfg.HeadDim*H+3*H*I)
		attn := 4 * float64(cfg.NumLayers*cfg.NumHeads*cfg.HeadDim) * float64(s*(s+1)/2)
		flops := perTok*s + attn + 2*float64(H*cfg.VocabSize)
		b.ResetTimer()
		for range b.N {
			seq, err := r.NewSequence()
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Step(ctx, []llama.Work{{Seq: seq, Tokens: prompt}}); err != nil {
				b.Fatal(err)
			}
			r.FreeSequence(seq)
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		b.ReportMetric(float64(s*b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
}

// BenchmarkLlamaLayerDecode/<dtype>/llama1b-layer/cpu: one decode step of
// one sequence through a single decoder layer of the 1B-shaped model
// (hidden 2048, 32/8 heads of 64, MLP 8192) with a 256-token vocabulary,
// so that the embedding and the LM head (0.5 M parameters against the
// layer's 60 M) hardly count, at 128 … 255 tokens of context (a 128-token
// prompt, restarted untimed at 256); e4m3 is the bf16 checkpoint loaded
// with LoadOptions.Float8. scripts/layer-vs-torch.sh runs the f32 and
// bf16 ones against the same layer in PyTorch at one thread; GB/s counts
// the weight bytes read per step.
func BenchmarkLlamaLayerDecode(b *testing.B) {
	for _, dt := range []tile.DType{tile.F32, tile.BF16, tile.E4M3} {
		b.Run(dt.String()+"/llama1b-layer/cpu", func(b *testing.B) {
			stored, lo := dt, &llama.LoadOptions{}
			if dt == tile.E4M3 {
				stored, lo.Float8 = tile.BF16, true
			}
			cfg := llamatest.Llama1B()
			cfg.NumLayers, cfg.VocabSize, cfg.TieWordEmbeddings = 1, 256, true
			cfg.BOSTokenID, cfg.EOSTokenIDs = 1, []int{2}
			dir := b.TempDir()
			if err := llamatest.WriteRandomCheckpoint(dir, cfg, stored, 1, nil); err != nil {
				b.Fatal(err)
			}
			rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			ctx := context.Background()
			m, err := llama.Load(ctx, rt, dir, lo)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			const prompt, maxLen = 128, 256
			r, err := llama.NewRunner(m, &llama.RunnerOptions{MaxSeqs: 1, MaxTokens: prompt, MaxSeqLen: maxLen})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			work := []llama.Work{{Seq: -1}}
			start := func() {
				if work[0].Seq >= 0 {
					r.FreeSequence(work[0].Seq)
				}
				work[0].Seq, _ = r.NewSequence()
				work[0].Tokens = make([]int32, prompt)
				for j := range work[0].Tokens {
					work[0].Tokens[j] = int32(7 * j % cfg.VocabSize)
				}
				if err := r.Step(ctx, work); err != nil {
					b.Fatal(err)
				}
				work[0].Tokens = []int32{3}
			}
			start()
			b.ResetTimer()
			for range b.N {
				if r.Len(work[0].Seq) >= maxLen {
					b.StopTimer()
					start()
					b.StartTimer()
				}
				if err := r.Step(ctx, work); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(m.WeightBytes())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

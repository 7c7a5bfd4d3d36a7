package llama_test

import (
	"context"
	"fmt"
	"maps"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

const (
	llamaPkg = "github.com/tcrt-go/tcrt/model/llama."
	tcrtPkg  = "github.com/tcrt-go/tcrt/"
)

// allocSites runs fn n times in a fresh goroutine under a full memory
// profile and sorts every allocation made by a stack through
// model/llama by where it leaves the package: own are allocations made
// by model/llama itself (its innermost frame calls the Go runtime's
// allocator, or any package outside tcrt), keyed by that frame; calls
// are allocations inside the tcrt packages it calls (ops, runtime),
// keyed by the called function. Both are per run of fn, from every
// goroutine (the engine's loop too); stacks that never pass through
// model/llama (the fallback's worker pool) are left out. fn runs on a
// fresh goroutine so that its stacks fit the profile's 32 frames.
func allocSites(fn func(), n int) (own, calls map[string]float64) {
	rate := goruntime.MemProfileRate
	goruntime.MemProfileRate = 1
	defer func() { goruntime.MemProfileRate = rate }()
	snapshot := func() map[[32]uintptr]int64 {
		// The profile is published at the end of a GC cycle: two cycles
		// make it current.
		goruntime.GC()
		goruntime.GC()
		var recs []goruntime.MemProfileRecord
		for {
			k, ok := goruntime.MemProfile(recs, true)
			if ok {
				recs = recs[:k]
				break
			}
			recs = make([]goruntime.MemProfileRecord, k+64)
		}
		m := make(map[[32]uintptr]int64, len(recs))
		for _, r := range recs {
			m[r.Stack0] += r.AllocObjects
		}
		return m
	}
	before := snapshot()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			fn()
		}
	}()
	<-done
	after := snapshot()
	own, calls = map[string]float64{}, map[string]float64{}
	for stk, objs := range after {
		d := objs - before[stk]
		if d <= 0 {
			continue
		}
		var pcs []uintptr
		for _, pc := range stk {
			if pc == 0 {
				break
			}
			pcs = append(pcs, pc)
		}
		frames := goruntime.CallersFrames(pcs)
		callee := ""
		for {
			f, more := frames.Next()
			if strings.HasPrefix(f.Function, llamaPkg) {
				name := strings.TrimPrefix(f.Function, "github.com/tcrt-go/tcrt/model/")
				if strings.HasPrefix(callee, tcrtPkg) {
					calls[strings.TrimPrefix(callee, tcrtPkg)] += float64(d) / float64(n)
				} else {
					own[name+" → "+callee] += float64(d) / float64(n)
				}
				break
			}
			callee = f.Function
			if !more {
				break
			}
		}
	}
	return own, calls
}

// sitesTable formats allocSites' map, largest first.
func sitesTable(m map[string]float64) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		if c := -cmpFloat(m[a], m[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "\n\t%7.1f  %s", m[k], k)
	}
	return sb.String()
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestDecodeAllocs measures a decode step's heap allocations: none in
// steady state (outside race builds). model/llama itself makes none
// (NewRunner allocated every buffer and every slice a step uses): the
// test fails on any allocation whose innermost frame is in the package.
// The ops, the runtime and the fallback take what they need from pools;
// the profile's table, logged per called function, shows the pools'
// refills after its garbage collections.
func TestDecodeAllocs(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Tiny(), tile.F32, 1)
	r := f.runner(t, llama.RunnerOptions{MaxSeqs: 1, MaxTokens: 16, MaxSeqLen: 320}) // room for the retried counts
	seq, _ := r.NewSequence()
	if err := r.Step(ctx, []llama.Work{{Seq: seq, Tokens: []int32{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	work := []llama.Work{{Seq: seq, Tokens: []int32{5}}}
	var stepErr error
	step := func() {
		if err := r.Step(ctx, work); err != nil && stepErr == nil {
			stepErr = err
		}
	}
	step() // first page boundary crossings aside
	// The least of three counts: a garbage collection during a count
	// empties the pools once, a real per-step allocation shows in all.
	count := func() float64 {
		n := testing.AllocsPerRun(20, step)
		for try := 1; try < 3 && n > 0; try++ {
			n = min(n, testing.AllocsPerRun(20, step))
		}
		return n
	}
	short := count()
	for r.Len(seq) < 200 {
		step()
	}
	long := count()
	own, calls := allocSites(step, 20)
	if stepErr != nil {
		t.Fatal(stepErr)
	}
	t.Logf("decode step allocations: %.0f at length ~30, %.0f at length ~200 (2 layers); by called function:%s", short, long, sitesTable(calls))
	if len(own) > 0 {
		t.Errorf("model/llama allocates in a decode step (per step):%s", sitesTable(own))
	}
	// The race detector's sync.Pool drops items at random, which moves
	// the count by a few.
	if !raceBuild && (short > 0 || long > 0) {
		t.Errorf("a decode step allocates %.0f times at length ~30, %.0f at ~200; want 0", short, long)
	}
}

// TestEngineAllocs: the engine's loop adds no allocation per generated
// token to those of the runner's Step and Sample (whose ops calls
// allocate, see TestDecodeAllocs): the allocations model/llama itself
// makes for a request (its stream, its record) do not grow with its
// length.
func TestEngineAllocs(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Tiny(), tile.F32, 1)
	e := f.engine(t, llama.RunnerOptions{MaxSeqs: 1, MaxTokens: 16, MaxSeqLen: 256})
	stop := []int32{}
	var genErr error
	gen := func(n int) func() {
		return func() {
			ch, err := e.Submit(ctx, []int32{1, 2, 3}, &llama.GenerateOptions{MaxNewTokens: n, StopTokens: stop})
			if err != nil {
				genErr = err
				return
			}
			for tok := range ch {
				if tok.Err != nil && genErr == nil {
					genErr = tok.Err
				}
			}
		}
	}
	gen(4)() // warm up
	total := func(m map[string]float64) float64 {
		s := 0.0
		for _, v := range m {
			s += v
		}
		return s
	}
	// The least growth of three tries: the Go runtime's own caches (the
	// sudogs a select takes, emptied at each garbage collection) refill
	// now and then inside the loop's frames, once per a few requests; an
	// allocation per token shows in every try, 40 times over.
	var ownShort, ownLong, callsLong map[string]float64
	d := 0.0
	for try := 0; try < 3; try++ {
		ownShort, _ = allocSites(gen(4), 3)
		ownLong, callsLong = allocSites(gen(44), 3)
		if genErr != nil {
			t.Fatal(genErr)
		}
		if d = total(ownLong) - total(ownShort); d <= 0.5 {
			break
		}
	}
	t.Logf("per request of 4 tokens, model/llama's own allocations:%s", sitesTable(ownShort))
	t.Logf("per request of 44 tokens: own:%s\ncalled:%s", sitesTable(ownLong), sitesTable(callsLong))
	if d > 0.5 {
		t.Errorf("model/llama's own allocations grow by %.1f for 40 more tokens, in each of three tries:%s", d, sitesTable(ownLong))
	}
	if total(callsLong) == 0 {
		t.Errorf("no allocation of the engine's steps was attributed: the profile missed its goroutine")
	}
}

package fallback

import (
	"bytes"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunPool checks the helper pool's contract: every item of a task is
// taken exactly once, whatever number of goroutines join; run returns
// only after every call of f has returned; calls overlapping one in
// progress (from other goroutines, or nested inside f) run on goroutines
// of their own and complete too; zero helpers run f on the caller alone.
// Tasks follow one another both within the helpers' spin and after they
// have parked. A panic in the caller's part leaves no task open.
func TestRunPool(t *testing.T) {
	task := func(items int, inside *atomic.Int32, slow bool) (func(), func() []int32) {
		var next atomic.Int64
		taken := make([]int32, items)
		f := func() {
			inside.Add(1)
			defer inside.Add(-1)
			for {
				i := int(next.Add(1) - 1)
				if i >= items {
					return
				}
				atomic.AddInt32(&taken[i], 1)
				if slow {
					time.Sleep(20 * time.Microsecond)
				}
			}
		}
		return f, func() []int32 { return taken }
	}
	check := func(name string, taken []int32, inside *atomic.Int32) {
		t.Helper()
		for i, n := range taken {
			if n != 1 {
				t.Fatalf("%s: item %d taken %d times", name, i, n)
			}
		}
		if n := inside.Load(); n != 0 {
			t.Fatalf("%s: run returned with %d calls of f still running", name, n)
		}
	}
	var inside atomic.Int32
	for round := range 200 {
		f, taken := task(1+round%37, &inside, round%10 == 0)
		run(round%4, f)
		check("sequential", taken(), &inside)
		if round%50 == 49 {
			time.Sleep(2 * poolSpin) // the helpers park
		}
	}
	// Overlapping calls from several goroutines, some nesting a call.
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inside atomic.Int32
			for round := range 50 {
				f, taken := task(64, &inside, false)
				if (g+round)%3 == 0 {
					outer, outerTaken := task(8, &inside, false)
					run(2, func() { outer(); run(1, f) })
					check("nested outer", outerTaken(), &inside)
				} else {
					run(3, f)
				}
				check("overlapping", taken(), &inside)
			}
		}()
	}
	wg.Wait()
	// A panic in the caller's part closes the task: the pool is free
	// again, and no helper runs the old task afterwards.
	// (Only the caller's call panics: a helper's would end the process.)
	var late atomic.Int32
	caller := goroutineID()
	func() {
		defer func() { recover() }()
		run(1, func() {
			late.Add(1)
			if goroutineID() == caller {
				panic("f")
			}
		})
	}()
	n := late.Load()
	time.Sleep(2 * poolSpin)
	if late.Load() != n {
		t.Fatalf("a helper ran the task after run returned")
	}
	f, taken := task(100, &inside, false)
	run(1, f)
	check("after a panic", taken(), &inside)
	if helperPool.busy.Load() {
		t.Fatalf("the pool is still busy after its last task")
	}
	calls := 0
	run(0, func() { calls++ })
	if calls != 1 {
		t.Fatalf("run(0, f) called f %d times, want 1", calls)
	}
}

// goroutineID is the calling goroutine's number, from its stack header
// ("goroutine 7 [running]:").
func goroutineID() int {
	buf := make([]byte, 64)
	buf = buf[:goruntime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 {
		return -1
	}
	id, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return -1
	}
	return id
}

// TestHelperPanicsReachTheCaller: a panic on any goroutine of a parallel
// call (the helper pool, per-call goroutines, parallel, parallelFor, the
// quantisers' workers) is re-raised on the caller once the others have
// finished, so a recover there (the runtime's task runner) catches it and
// the process survives.
func TestHelperPanicsReachTheCaller(t *testing.T) {
	boom := func(i int) {
		if i == 3 {
			panic("boom")
		}
	}
	calls := map[string]func(){
		"pool": func() {
			var next atomic.Int64
			run(3, func() {
				for i := int(next.Add(1) - 1); i < 64; i = int(next.Add(1) - 1) {
					boom(i)
				}
			})
		},
		"quantParallel": func() {
			quantParallel(8, 1, 4, func(lo, hi, _ int) {
				for i := lo; i < hi; i++ {
					boom(i)
				}
			})
		},
		"forRows": func() {
			forRows(64, 1<<20, 4, 8, func(lo, hi int, _ []float32) {
				for i := lo; i < hi; i++ {
					boom(i)
				}
			})
		},
		"attnPar": func() {
			// A run without arguments: the workers' items fail (nil a).
			c := attnCalls.Get().(*attnCall)
			c.items, c.d = make([]attnItem, 8), 8
			defer func() {
				if r := recover(); r != nil {
					panic("boom") // the workers' panic reached the caller
				}
			}()
			c.par.run(8, 4, false)
		},
		"parallelFor": func() {
			parallelFor(8, 4, 1, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					boom(i)
				}
			})
		},
	}
	for name, call := range calls {
		for range 20 {
			got := func() (r any) {
				defer func() { r = recover() }()
				call()
				return nil
			}()
			if got != "boom" {
				t.Fatalf("%s: recovered %v on the caller; want the helper's panic", name, got)
			}
		}
	}
	// The pool still works after its helpers panicked.
	var n atomic.Int64
	var next atomic.Int64
	run(3, func() {
		for i := next.Add(1) - 1; i < 100; i = next.Add(1) - 1 {
			n.Add(1)
		}
	})
	if n.Load() != 100 {
		t.Fatalf("pool after panics: %d items of 100", n.Load())
	}
}

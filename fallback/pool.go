package fallback

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The helper pool. A product split among workers used to start a
// goroutine for each, every call; waking an idle OS thread for it takes
// tens to hundreds of microseconds on a virtual machine (75–200 µs under
// load), during which the calling goroutine works alone, and at the end it
// waits for the late starter's share: a 512³ product takes about 0.9 ms.
// Instead, helper goroutines stay, and after a task spin for a while
// (poolSpin) watching for the next one before they park, so that products
// that follow one another closely (a model's layers) start on all cores
// at once. Nothing waits for a helper that has not started: the work is
// shared out as items that any number of goroutines take in turn, and the
// caller, having run out of items, waits only for the helpers that are
// still inside the task.

// poolSpin is how long an idle helper watches for the next task before it
// parks. Spinning costs a core for that long after each task; a product
// that follows within it starts without waking a thread.
var poolSpin = 50 * time.Microsecond

// poolOff, set by benchmarks, makes run start goroutines per call, as
// before the pool, to compare the two.
var poolOff bool

// poolTask is one call of run: f, which helpers join while it is open.
type poolTask struct {
	f func()
	// want is how many more helpers may join.
	want atomic.Int32
	// state counts the helpers inside f, with taskClosed set once the
	// caller has finished its own part: no helper joins after that.
	state atomic.Int64
	// done gets one token from the last helper to leave a closed task.
	done chan struct{}
	// panicked holds the first panic of a helper inside f.
	panicked goPanic
}

// goPanic holds the first panic of the helper goroutines of one parallel
// call, so that the caller re-raises it on its own goroutine once they
// have all finished: there the runtime's task runner turns it into an
// ErrDevice error, where a panic left on a helper goroutine would end the
// process.
type goPanic struct{ p atomic.Pointer[panicValue] }

type panicValue struct{ v any }

// catch records a panic; defer it directly (recover works only there).
func (g *goPanic) catch() {
	if r := recover(); r != nil {
		g.p.CompareAndSwap(nil, &panicValue{r})
	}
}

// rethrow panics with the recorded panic, if any, on the caller.
func (g *goPanic) rethrow() {
	if v := g.p.Load(); v != nil {
		panic(v.v)
	}
}

const taskClosed = 1 << 40

// join enters t unless it is closed or has all the helpers it wants.
func (t *poolTask) join() bool {
	if t.want.Add(-1) < 0 {
		return false
	}
	for {
		s := t.state.Load()
		if s&taskClosed != 0 {
			return false
		}
		if t.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// leave exits t, handing the caller its token if it was the last helper
// of a closed task.
func (t *poolTask) leave() {
	if t.state.Add(-1) == taskClosed {
		t.done <- struct{}{}
	}
}

// close stops helpers from joining t and waits for those inside it:
// spinning for poolSpin (the helpers are finishing their last items), then
// blocked. It takes the last helper's token, so that a late send cannot
// end the wait of the task's next use.
func (t *poolTask) close() {
	for {
		s := t.state.Load()
		if t.state.CompareAndSwap(s, s|taskClosed) {
			if s == 0 {
				return // no helper inside: no token comes
			}
			break
		}
	}
	spin(func() bool { return len(t.done) > 0 }, false)
	<-t.done
}

// open readies the pool's one task for f and up to want helpers. It is
// closed (no helper inside, its token taken); a helper holding it from an
// earlier use may try to join while it is written, and fails until the
// state is stored last.
func (t *poolTask) open(f func(), want int) {
	t.f = f
	t.panicked.p.Store(nil)
	t.want.Store(int32(min(want, 1<<30)))
	t.state.Store(0)
}

// spin polls done for up to poolSpin, reading the clock (and, with yield,
// letting other goroutines run) every 64 polls, and reports whether done
// became true.
func spin(done func() bool, yield bool) bool {
	deadline := time.Now().Add(poolSpin)
	for i := 1; ; i++ {
		if done() {
			return true
		}
		if i%64 == 0 {
			if time.Now().After(deadline) {
				return false
			}
			if yield {
				goruntime.Gosched()
			}
		}
	}
}

// helperPool is the process's pool of helpers, started on first use.
var helperPool struct {
	busy    atomic.Bool              // a task is being published or run
	task    atomic.Pointer[poolTask] // the open task, nil between tasks
	t       poolTask                 // the task, reused by every run
	seq     atomic.Uint64            // bumped when a task is published
	parked  atomic.Int32             // helpers waiting on cond
	mu      sync.Mutex               // guards started; cond's lock
	cond    *sync.Cond               // parked helpers wait here
	started int                      // helpers started
}

// run runs f on the calling goroutine and on up to helpers other
// goroutines at once, and returns when every call of f has returned. f
// must share its work out so that any number of concurrent calls, one or
// more, complete it (items taken from an atomic counter). While another
// run is in progress, run starts goroutines instead.
func run(helpers int, f func()) {
	if helpers <= 0 {
		f()
		return
	}
	p := &helperPool
	if poolOff || !p.busy.CompareAndSwap(false, true) {
		var wg sync.WaitGroup
		var gp goPanic
		wg.Add(helpers)
		for range helpers {
			go func() {
				defer wg.Done()
				defer gp.catch()
				f()
			}()
		}
		func() {
			defer gp.catch()
			f()
		}()
		wg.Wait()
		gp.rethrow()
		return
	}
	p.mu.Lock()
	if p.cond == nil {
		p.cond = sync.NewCond(&p.mu)
		p.t.done = make(chan struct{}, 1)
		p.t.state.Store(taskClosed)
	}
	for ; p.started < min(helpers, goruntime.GOMAXPROCS(0)-1); p.started++ {
		go helper()
	}
	p.mu.Unlock()
	t := &p.t
	t.open(f, helpers)
	p.task.Store(t)
	p.seq.Add(1)
	if p.parked.Load() > 0 {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	// Closed however f ends: a panic in f must not leave the task open
	// for helpers that wake later, nor the pool busy.
	defer func() {
		t.close()
		p.task.Store(nil)
		t.f = nil
		v := t.panicked.p.Load()
		p.busy.Store(false)
		if v != nil {
			panic(v.v) // a helper's panic, on the caller
		}
	}()
	f()
}

// helper runs the pool's tasks as they come, spinning for poolSpin after
// each before it parks.
func helper() {
	p := &helperPool
	var seen uint64
	for {
		seq := p.seq.Load()
		if seq == seen {
			seq = waitTask(seen)
		}
		seen = seq
		if t := p.task.Load(); t != nil && t.join() {
			func() {
				defer t.leave()
				defer t.panicked.catch()
				t.f()
			}()
		}
	}
}

// waitTask returns the task sequence number once it differs from seen:
// spinning for poolSpin, then parked.
func waitTask(seen uint64) uint64 {
	p := &helperPool
	if spin(func() bool { return p.seq.Load() != seen }, true) {
		return p.seq.Load()
	}
	p.mu.Lock()
	p.parked.Add(1)
	for p.seq.Load() == seen {
		p.cond.Wait()
	}
	p.parked.Add(-1)
	p.mu.Unlock()
	return p.seq.Load()
}

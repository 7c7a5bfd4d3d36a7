package sim

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tcrt-go/tcrt/sass"
)

// The functional simulator.
//
// A Sim runs a Program over a grid of CTAs, each CTA in warps of 32 lanes
// formed from the linear thread index x + y*Bx + z*Bx*By, as the hardware
// forms them. Every lane has its own general registers and predicates;
// every warp has uniform registers and its scoreboards, tracked from the
// control words. A warp runs until it waits at a barrier or exits; the
// CTA's warps run in turn until all have exited, and a round in which no
// warp can run is a deadlock. CTAs run in parallel goroutines
// (Config.Workers); atomics and reductions serialise on the Memory's
// lock.
//
// What is modelled is what the SM86 kernels of this module use: see the
// simulator documentation in doc.go for the list, the
// semantics chosen where the hardware's are not public, and what is not
// modelled. Timing is not: every result is ready at once, so a missing
// wait is the schedule checker's to find, not the simulator's; but a read
// of in-flight LDGSTS bytes, a wait on a scoreboard nothing set (only with
// Config.StrictScoreboards; otherwise a no-op, as on hardware) and the
// other faults (the Err* sentinels) are reported.

// Config is one launch.
type Config struct {
	// Grid and Block are the CTA grid and the CTA's thread block; zero
	// dimensions count as 1. A block holds at most 1024 threads.
	Grid, Block [3]int
	// SharedBytes is the CTA's shared memory (static plus dynamic). Every
	// access must fall inside it.
	SharedBytes int
	// Params are the kernel's parameter bytes, placed in constant bank 0
	// from 0x160. Bank 0 also holds the block dimensions at 0x0, 0x4, 0x8,
	// the grid dimensions at 0xc, 0x10, 0x14, the generic address
	// space's shared and local window bases (64 bits) at 0x18 and 0x20, a
	// stack pointer at 0x28 and the global memory descriptor (64 bits) at
	// 0x118, as ptxas expects.
	Params []byte
	// Banks holds constant banks other than 0, if the program reads them.
	Banks map[uint8][]byte
	// Memory is global memory; a nil Memory is an empty one.
	Memory *Memory
	// Poison reports reads of registers, predicates and uniform registers
	// no instruction has written in that lane (ErrUninitialized), and
	// fills shared memory with 0xCD bytes instead of zeros.
	Poison bool
	// Workers is how many CTAs run at once; 0 means GOMAXPROCS. With 1,
	// CTAs run in order and atomics are deterministic.
	Workers int
	// MaxSteps bounds the warp instructions one CTA may execute; 0 means
	// 1<<28.
	MaxSteps int64
	// StrictScoreboards reports a wait (wait mask or DEPBAR) on a
	// scoreboard that no instruction in flight set as ErrScoreboard.
	// Without it such a wait is a no-op, as on hardware: ptxas emits these
	// waits routinely (a wait mask on a scoreboard whose setter was
	// guarded off or already waited for). Hand-written kernels set it to
	// catch a wait that names the wrong scoreboard.
	StrictScoreboards bool
}

// Stats counts what a launch executed.
type Stats struct {
	CTAs int64
	// WarpInstructions counts instructions issued per warp;
	// ThreadInstructions counts them once for every live (not exited)
	// lane of the warp, guarded off or not.
	WarpInstructions, ThreadInstructions int64
}

// Sim is a program decoded for simulation; decode once, launch many
// times. A Sim may run several launches at once.
type Simulator struct {
	prog  sass.Program
	ds    []dinst
	nregs int
}

// New decodes p for simulation. Instructions the simulator does not
// model are not an error here: they fault (ErrUnsupported) if a warp
// executes them. Unsupported lists them.
func New(p sass.Program) (*Simulator, error) {
	if len(p) == 0 {
		return nil, fmt.Errorf("%w: empty program", ErrConfig)
	}
	ds, maxReg := decodeProgram(p)
	if maxReg > 255 {
		maxReg = 255
	}
	return &Simulator{prog: p, ds: ds, nregs: maxReg}, nil
}

// Unsupported returns the indices of the instructions the simulator cannot
// execute, with the reason for each.
func (s *Simulator) Unsupported() map[int]error {
	out := map[int]error{}
	if s == nil {
		return out
	}
	for k := range s.ds {
		if s.ds[k].op == xBad {
			out[k] = s.ds[k].err
		}
	}
	return out
}

// Launch decodes p and runs it once (New, then Sim.Launch).
func Launch(p sass.Program, cfg Config) (Stats, error) {
	s, err := New(p)
	if err != nil {
		return Stats{}, err
	}
	return s.Launch(cfg)
}

// launch is the state shared by a launch's CTAs.
type launch struct {
	s      *Simulator
	cfg    Config
	ds     []dinst
	grid   [3]int
	block  [3]int
	nthr   int
	mem    *Memory
	limit  int64
	stop   atomic.Bool
	bank0  []byte
	warpsN int
}

func dims(d [3]int) [3]int {
	for i := range d {
		if d[i] == 0 {
			d[i] = 1
		}
	}
	return d
}

// Launch runs the program over cfg's grid. It returns the first fault (by
// CTA order among those that ran) as a *Fault, or a configuration
// error wrapping ErrConfig.
func (s *Simulator) Launch(cfg Config) (Stats, error) {
	if s == nil {
		return Stats{}, fmt.Errorf("%w: a nil *Simulator (make one with New)", ErrConfig)
	}
	l := &launch{s: s, cfg: cfg, grid: dims(cfg.Grid), block: dims(cfg.Block), mem: cfg.Memory}
	for i := 0; i < 3; i++ {
		if l.grid[i] < 0 || l.block[i] < 0 || l.grid[i] > 1<<31-1 || (i > 0 && l.grid[i] > 65535) {
			return Stats{}, fmt.Errorf("%w: grid %v block %v", ErrConfig, cfg.Grid, cfg.Block)
		}
	}
	l.nthr = l.block[0] * l.block[1] * l.block[2]
	if l.nthr > 1024 || l.block[2] > 64 {
		return Stats{}, fmt.Errorf("%w: block %v", ErrConfig, l.block)
	}
	if cfg.SharedBytes < 0 || cfg.SharedBytes > 228<<10 {
		return Stats{}, fmt.Errorf("%w: %d bytes of shared memory", ErrConfig, cfg.SharedBytes)
	}
	if len(cfg.Params) > 0x10000-0x160 {
		return Stats{}, fmt.Errorf("%w: %d parameter bytes", ErrConfig, len(cfg.Params))
	}
	if l.mem == nil {
		l.mem = NewMemory()
	}
	l.limit = cfg.MaxSteps
	if l.limit <= 0 {
		l.limit = 1 << 28
	}
	b0 := make([]byte, 0x160+len(cfg.Params))
	for i := 0; i < 3; i++ {
		binary.LittleEndian.PutUint32(b0[4*i:], uint32(l.block[i]))
		binary.LittleEndian.PutUint32(b0[0xc+4*i:], uint32(l.grid[i]))
	}
	binary.LittleEndian.PutUint64(b0[0x18:], sharedWindow)
	binary.LittleEndian.PutUint64(b0[0x20:], localWindow)
	binary.LittleEndian.PutUint32(b0[0x28:], 0xfffc00)
	binary.LittleEndian.PutUint64(b0[0x118:], 0x000000ff00000000)
	copy(b0[0x160:], cfg.Params)
	l.bank0 = b0
	l.ds = bindProgram(s.ds, b0, cfg.Banks)
	l.warpsN = (l.nthr + 31) / 32

	total := int64(l.grid[0]) * int64(l.grid[1]) * int64(l.grid[2])
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// More workers than a few per core only add goroutines (a huge
	// Workers once started one per CTA).
	workers = min(workers, 4*runtime.GOMAXPROCS(0))
	if int64(workers) > total {
		workers = int(total)
	}
	var next atomic.Int64
	var mu sync.Mutex
	var stats Stats
	var first *Fault
	firstAt := int64(-1)
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := l.newCTA()
			var st Stats
			for !l.stop.Load() {
				i := next.Add(1) - 1
				if i >= total {
					break
				}
				err := c.run(i)
				st.CTAs++
				st.WarpInstructions += c.steps
				st.ThreadInstructions += c.tinst
				if err != nil {
					f, ok := err.(*Fault)
					if !ok {
						f = &Fault{Kind: ErrUnsupported, Detail: err.Error()}
					}
					mu.Lock()
					if firstAt < 0 || i < firstAt {
						first, firstAt = f, i
					}
					mu.Unlock()
					l.stop.Store(true)
					break
				}
			}
			mu.Lock()
			stats.CTAs += st.CTAs
			stats.WarpInstructions += st.WarpInstructions
			stats.ThreadInstructions += st.ThreadInstructions
			mu.Unlock()
		}()
	}
	wg.Wait()
	if first != nil {
		return stats, first
	}
	return stats, nil
}

// warp states
const (
	wReady uint8 = iota
	wWaiting
	wDone
	wYielded // YIELD ended the warp's turn: ready again at its next one
)

type warp struct {
	c  *cta
	id int
	r  [][32]uint32
	wr []uint32 // lanes that have written each register
	// wrb (poison mode only): for lanes a partial write left partly
	// defined (PRMT moving undefined bytes, poison.go), the lanes in
	// which byte b of each register is defined. Byte b of register r is
	// defined in the lanes wr[r] | wrb[r][b].
	wrb    [][4]uint32
	disc   [4][32]uint32 // the discarded words of an RZ (or uniform) destination tuple
	ur     [64]uint32
	urw    uint64
	p      [16]uint32 // P0..PT, then UP0..UPT (8+n: all lanes or none)
	pw     [16]uint32
	exists uint32
	active uint32 // the lanes of the running group
	live   uint32 // lanes that have not exited
	pc     int
	pend   []lgroup   // diverged lane groups waiting to run (empty when converged)
	cbar   [16]uint32 // convergence barriers B0..B15: the lanes BSSY recorded
	depth  [32]int32  // each lane's call depth (CALL less RET)
	loc    [32][]byte // each lane's local memory window, allocated on first use
	state  uint8
	barPC  int
	sb     [7]int32
	tid    [3][32]uint32
	scr    [4][32]uint32
	mc     memCache
	unmark uint32    // lanes whose destination the instruction left undefined
	partB  [4]uint32 // of unmark, the lanes with byte b defined (partial writes)

	open    []int32   // LDGSTS copies of the open group
	groups  [][]int32 // committed groups in flight, oldest first
	landed  []int32   // copies retired but not yet made visible by a barrier
	asyncSB int8

	// barRes is the result of the warp's last completed BAR.RED
	// (barResSet: there was one), read by B2R.RESULT.
	barRes    uint32
	barResSet bool
}

// lgroup is a group of a diverged warp's lanes at one pc.
type lgroup struct {
	pc   int
	mask uint32
}

type barrier struct {
	arrived  int
	expected int // warps; -1: every live warp
	waiting  []*warp
	arrivers []*warp
	red      barRed // BAR.RED's reduction (barred.go)
}

type asyncRec struct {
	warp, lane int32
	landed     bool
	addr, n    int32
}

type cta struct {
	l      *launch
	id     [3]int
	warps  []*warp
	shared []byte
	shadow []int32
	recs   []asyncRec
	live   int
	bars   [16]barrier
	steps  int64
	tinst  int64
}

func (l *launch) newCTA() *cta {
	c := &cta{l: l, shared: make([]byte, l.cfg.SharedBytes)}
	nr := l.s.nregs
	for k := 0; k < l.warpsN; k++ {
		w := &warp{c: c, id: k, r: make([][32]uint32, nr), wr: make([]uint32, nr)}
		if l.cfg.Poison {
			w.wrb = make([][4]uint32, nr)
		}
		w.mc.m = l.mem
		for lane := 0; lane < 32; lane++ {
			t := k*32 + lane
			if t >= l.nthr {
				continue
			}
			w.exists |= 1 << lane
			w.tid[0][lane] = uint32(t % l.block[0])
			w.tid[1][lane] = uint32(t / l.block[0] % l.block[1])
			w.tid[2][lane] = uint32(t / (l.block[0] * l.block[1]))
		}
		c.warps = append(c.warps, w)
	}
	return c
}

// run runs CTA number i (linear, x fastest).
func (c *cta) run(i int64) error {
	l := c.l
	c.id = [3]int{int(i % int64(l.grid[0])), int(i / int64(l.grid[0]) % int64(l.grid[1])),
		int(i / (int64(l.grid[0]) * int64(l.grid[1])))}
	c.steps, c.tinst = 0, 0
	fill := byte(0)
	if l.cfg.Poison {
		fill = 0xcd
	}
	for k := range c.shared {
		c.shared[k] = fill
	}
	c.shadow, c.recs = nil, c.recs[:0]
	c.bars = [16]barrier{}
	c.live = len(c.warps)
	for _, w := range c.warps {
		for k := range w.r {
			w.r[k] = [32]uint32{}
			w.wr[k] = 0
		}
		clear(w.wrb)
		w.ur, w.urw = [64]uint32{}, 0
		w.p, w.pw = [16]uint32{}, [16]uint32{}
		w.p[sass.PT], w.pw[sass.PT] = 0xffffffff, 0xffffffff
		w.p[upBase+sass.UPT], w.pw[upBase+sass.UPT] = 0xffffffff, 0xffffffff
		w.active, w.live, w.pc, w.state = w.exists, w.exists, 0, wReady
		w.pend, w.cbar, w.depth = w.pend[:0], [16]uint32{}, [32]int32{}
		for _, b := range w.loc {
			for k := range b {
				b[k] = fill
			}
		}
		w.sb = [7]int32{}
		w.barRes, w.barResSet = 0, false
		w.open, w.groups, w.landed, w.asyncSB = nil, nil, nil, 0
	}
	for {
		progress := false
		for _, w := range c.warps {
			if w.state == wYielded {
				w.state = wReady
			}
			if w.state != wReady {
				continue
			}
			progress = true
			if err := c.runWarp(w); err != nil {
				return err
			}
		}
		if c.live == 0 {
			return nil
		}
		if !progress {
			return c.deadlock()
		}
	}
}

func (c *cta) deadlock() error {
	for _, w := range c.warps {
		if w.state != wWaiting {
			continue
		}
		var detail string
		for b := range c.bars {
			bb := &c.bars[b]
			if len(bb.waiting) == 0 {
				continue
			}
			exp := bb.expected
			if exp < 0 {
				exp = c.live
			}
			detail += fmt.Sprintf("barrier %d: %d of %d warps arrived; ", b, bb.arrived, exp)
		}
		return c.faultAt(w, w.barPC, firstLane(w.active), ErrDeadlock, detail+"no warp can run")
	}
	return c.faultAt(c.warps[0], 0, 0, ErrDeadlock, "no warp can run")
}

func firstLane(m uint32) int {
	for l := 0; l < 32; l++ {
		if m>>l&1 != 0 {
			return l
		}
	}
	return 0
}

func (c *cta) faultAt(w *warp, idx, lane int, kind error, detail string) *Fault {
	text := ""
	if idx >= 0 && idx < len(c.l.ds) {
		text = c.l.ds[idx].text()
	}
	return &Fault{Kind: kind, CTA: c.id, Warp: w.id, Lane: lane, Index: idx, Text: text, Detail: detail}
}

func (c *cta) fault(w *warp, d *dinst, lane int, kind error, format string, a ...any) *Fault {
	return c.faultAt(w, d.idx, lane, kind, fmt.Sprintf(format, a...))
}

// arrive records warp w at barrier b with the given thread count (-1 all)
// and reports whether w must wait.
func (c *cta) arrive(w *warp, b int, count int, wait bool) {
	bb := &c.bars[b]
	if count < 0 {
		bb.expected = -1
	} else {
		bb.expected = (count + 31) / 32
	}
	bb.arrived++
	bb.arrivers = append(bb.arrivers, w)
	if wait {
		w.state = wWaiting
		bb.waiting = append(bb.waiting, w)
	}
	c.checkBarrier(b)
}

func (c *cta) checkBarrier(b int) {
	bb := &c.bars[b]
	if bb.arrived == 0 {
		return
	}
	exp := bb.expected
	if exp < 0 {
		exp = c.live
	}
	if bb.arrived < exp {
		return
	}
	for _, w := range bb.waiting {
		w.state = wReady
	}
	for _, w := range bb.arrivers {
		c.publish(w)
	}
	c.barRedDone(bb)
	bb.arrived, bb.waiting, bb.arrivers, bb.red = 0, nil, nil, barRed{}
}

// publish makes the retired LDGSTS copies of w visible to every thread.
func (c *cta) publish(w *warp) {
	for _, id := range w.landed {
		r := &c.recs[id-1]
		for a := r.addr; a < r.addr+r.n; a++ {
			if c.shadow[a] == id {
				c.shadow[a] = 0
			}
		}
	}
	w.landed = w.landed[:0]
}

func (c *cta) exitWarp(w *warp) {
	w.state = wDone
	c.live--
	for b := range c.bars {
		if c.bars[b].expected < 0 {
			c.checkBarrier(b)
		}
	}
}

var zeroLanes [32]uint32

func (w *warp) src(s *sopnd, slot int) *[32]uint32 {
	switch s.k {
	case oReg:
		return &w.r[s.r]
	case oImm:
		return s.arr
	case oUReg:
		t := &w.scr[slot]
		v := w.ur[s.r]
		for i := range t {
			t[i] = v
		}
		return t
	}
	return &zeroLanes
}

// srcK is word k of a register tuple (or of a 64-bit constant).
func (w *warp) srcK(s *sopnd, slot, k int) *[32]uint32 {
	switch s.k {
	case oReg:
		return &w.r[int(s.r)+k]
	case oImm:
		if k == 1 {
			return s.arr2
		}
		if k == 0 {
			return s.arr
		}
	case oUReg:
		t := &w.scr[slot]
		v := w.ur[int(s.r)+k]
		for i := range t {
			t[i] = v
		}
		return t
	}
	return &zeroLanes
}

func (w *warp) dst(n uint8) *[32]uint32 {
	if n == 255 {
		return &w.disc[0]
	}
	return &w.r[n]
}

func (w *warp) dstK(n uint8, k int) *[32]uint32 {
	if n == 255 {
		return &w.disc[k&3]
	}
	return &w.r[int(n)+k]
}

// uval is a uniform source's value (word k).
func (w *warp) uval(s *sopnd, k int) uint32 {
	switch s.k {
	case oImm:
		if k == 1 {
			return s.v2
		}
		return s.v
	case oUReg:
		return w.ur[int(s.r)+k]
	}
	return 0
}

func (w *warp) pred(p psrc) uint32 {
	m := w.p[p.p]
	if p.not {
		m = ^m
	}
	return m
}

func (w *warp) setPred(p uint8, m, exec uint32) {
	if p&7 == uint8(sass.PT) {
		return
	}
	if p >= upBase {
		// a uniform predicate: one value for the warp (the executing
		// lanes agree on it)
		w.p[p] = 0
		if m&exec != 0 {
			w.p[p] = 0xffffffff
		}
		return
	}
	w.p[p] = w.p[p]&^exec | m&exec
}

// runWarp runs w until it waits, exits or faults.
func (c *cta) runWarp(w *warp) error {
	ds := c.l.ds
	poison := c.l.cfg.Poison
	for w.state == wReady {
		if w.pc < 0 || w.pc >= len(ds) {
			return c.faultAt(w, len(ds)-1, firstLane(w.active), ErrUnsupported, "execution ran past the end of the program")
		}
		if len(w.pend) != 0 {
			w.mergeAt()
		}
		d := &ds[w.pc]
		c.steps++
		if c.steps > c.l.limit {
			return c.fault(w, d, firstLane(w.active), ErrStepLimit, "%d warp instructions", c.l.limit)
		}
		c.tinst += int64(popc(w.active))
		exec := w.active
		if d.guarded {
			if poison && d.gp != uint8(sass.PT) && w.pw[d.gp]&w.active != w.active {
				return c.fault(w, d, firstLane(w.active&^w.pw[d.gp]), ErrUninitialized, "guard %v never written", sass.Pred(d.gp))
			}
			m := w.p[d.gp]
			if d.gnot {
				m = ^m
			}
			exec &= m
		}
		if d.wait != 0 {
			if err := c.waitMask(w, d); err != nil {
				return err
			}
		}
		if d.op == xBad {
			return c.fault(w, d, firstLane(w.active), ErrUnsupported, "%v", d.err)
		}
		if poison && exec != 0 {
			if err := c.checkReads(w, d, exec); err != nil {
				return err
			}
		}
		if d.cerr != nil && exec != 0 {
			return c.fault(w, d, firstLane(exec), ErrOutOfBounds, "%v", d.cerr)
		}
		w.pc++
		if exec != 0 || d.op == xBRA {
			if err := c.exec(w, d, exec); err != nil {
				return err
			}
		}
		if d.wsb >= 0 {
			w.sb[d.wsb]++
		}
		if d.rsb >= 0 {
			w.sb[d.rsb]++
		}
		if exec != 0 {
			for _, s := range d.writes {
				switch s.kind {
				case 0:
					for k := 0; k < int(s.cnt); k++ {
						w.wr[int(s.n)+k] |= exec
					}
				case 1:
					w.pw[s.n] |= exec
				case 3:
					w.pw[s.n] = 0xffffffff
				case 2:
					for k := 0; k < int(s.cnt); k++ {
						w.urw |= 1 << (int(s.n) + k)
					}
				}
			}
			if w.unmark != 0 {
				w.unmarkDst(d.d)
			}
		}
	}
	return nil
}

func (c *cta) checkReads(w *warp, d *dinst, exec uint32) error {
	if d.op == xSEL {
		return c.checkSelReads(w, d, exec)
	}
	for _, s := range d.reads {
		switch s.kind {
		case 0:
			for k := 0; k < int(s.cnt); k++ {
				if m := w.wr[int(s.n)+k]; m&exec != exec {
					if err := c.checkBytes(w, d, exec, int(s.n)+k); err != nil {
						return err
					}
				}
			}
		case 1:
			if m := w.pw[s.n]; m&exec != exec {
				if s.n >= upBase {
					return c.fault(w, d, firstLane(exec), ErrUninitialized, "%v never written", sass.UPred(s.n-upBase))
				}
				return c.fault(w, d, firstLane(exec&^m), ErrUninitialized, "%v never written", sass.Pred(s.n))
			}
		case 2:
			for k := 0; k < int(s.cnt); k++ {
				if w.urw>>(int(s.n)+k)&1 == 0 {
					return c.fault(w, d, firstLane(exec), ErrUninitialized, "%v never written", sass.UReg(int(s.n)+k))
				}
			}
		}
	}
	if d.op == xPRMT && d.d != 255 {
		w.prmtBytes(d, exec)
	}
	return nil
}

// waitMask applies the control word's wait mask.
func (c *cta) waitMask(w *warp, d *dinst) error {
	for i := 0; i < 6; i++ {
		if d.wait>>i&1 == 0 {
			continue
		}
		if w.sb[i] == 0 {
			if c.l.cfg.StrictScoreboards {
				return c.fault(w, d, firstLane(w.active), ErrScoreboard, "waits on SB%d, which no instruction in flight set", i)
			}
			continue
		}
		w.sb[i] = 0
		if int8(i) == w.asyncSB {
			c.retire(w, 0)
		}
	}
	return nil
}

// retire retires the oldest committed LDGSTS groups of w until at most
// keep remain in flight.
func (c *cta) retire(w *warp, keep int) {
	for len(w.groups) > keep {
		for _, id := range w.groups[0] {
			c.recs[id-1].landed = true
			w.landed = append(w.landed, id)
		}
		w.groups = w.groups[1:]
	}
}

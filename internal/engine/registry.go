package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/cpuid/v2"

	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/runtime/backend"
)

// ISA is the kind of code a kernel is, which decides the devices it can
// run on.
type ISA string

// ISAs.
const (
	// ISACPU is host code over host memory: it runs on the CPU backend.
	ISACPU ISA = "cpu"
	// ISASASS is a cubin of hand-written SASS (kernels/sm86…): it runs on
	// GPUs, real or simulated, whose compute capability is in
	// [MinSM, MaxSM] and that can load Module.
	ISASASS ISA = "sass"
	// ISAPTX is a module shipped as PTX plus cubins: it runs on GPUs of
	// compute capability MinSM or newer that can load Module (a real
	// driver compiles the PTX; the simulated device needs a cubin).
	ISAPTX ISA = "ptx"
	// ISAHostFallback is a CPU kernel wrapped for a GPU device: the
	// operands are staged through host memory (hostfallback.go).
	ISAHostFallback ISA = "host-fallback"
)

// Arch is what a kernel needs of the device, in terms of the device (its
// ISA, compute capability and CPU features), never the name of a backend:
// one registration serves the real GPU and the simulated one.
type Arch struct {
	ISA ISA
	// CPUFeatures are cpuid features the CPU must have (CPU kernels).
	CPUFeatures []cpuid.FeatureID
	// MinSM and MaxSM bound the GPU compute capability, as 86 for 8.6; 0 means
	// unbounded. A SASS cubin for sm_86 runs on 86 ≤ SM ≤ 89.
	MinSM, MaxSM int
	// Module is the GPU module holding the kernel: the device must be able
	// to load an image of it (a cubin it runs, or PTX it can compile).
	Module *backend.Module
}

// String describes the requirement.
func (a Arch) String() string {
	parts := []string{string(a.ISA)}
	for _, f := range a.CPUFeatures {
		parts = append(parts, f.String())
	}
	if a.MinSM > 0 || a.MaxSM > 0 {
		if a.MaxSM > 0 {
			parts = append(parts, fmt.Sprintf("sm_%d..%d", a.MinSM, a.MaxSM))
		} else {
			parts = append(parts, fmt.Sprintf("sm_%d+", a.MinSM))
		}
	}
	return strings.Join(parts, "+")
}

// Kernel is one implementation of one op, as the registry holds it. Every
// implementation registers once, from an init function, with
// RegisterKernel (typed.go), which makes the Kernel.
type Kernel struct {
	// Name is unique across the registry, e.g. "cpu.matmul.avx512".
	Name string
	// Op is the operation, e.g. "matmul".
	Op string
	// Arch is what the kernel needs of the device.
	Arch Arch
	// Preference orders kernels that can all run a call: higher wins, then
	// the name decides, so selection is deterministic.
	Preference int
	// Doc is a one-line description shown by Explain.
	Doc string
	// Supports returns nil if the kernel can run the call described by args
	// (the op's argument struct), else an error saying why not (element
	// types, shape constraints).
	Supports func(args any) error
	// Launch enqueues the call on l.Stream. CPU kernels wrap their work with
	// CPUKernel (which enqueues it, or runs a synchronous call on an idle
	// stream at once); device kernels issue it on the device stream. A CPU
	// kernel must not enqueue further work on l.Stream: a synchronous
	// caller returns when the kernel does.
	Launch func(ctx context.Context, l *Launch) error
}

// Launch is one call of a kernel. It is valid while Kernel.Launch runs and
// while the work it enqueued runs; a kernel must not keep it longer (a
// launch that ran inline is reused).
type Launch struct {
	Runtime *Runtime
	Stream  *Stream
	Kernel  *Kernel
	Args    any
	Threads int // CPU goroutines the kernel may use

	sync    bool // the caller waits for the launch (a nil stream)
	inlined bool // CPUKernel ran it on the caller's goroutine

	// A launch that ran inline goes back to launchPool, so a synchronous
	// CPU call allocates no Launch and no closures: run and task are
	// bound to the Launch once.
	ctx       context.Context
	cpu       func(*Launch) error // CPUKernel's function
	run, task func() error        // Kernel.Launch(ctx, l), and cpu(l)
}

// bind makes l's run and task closures.
func (l *Launch) bind() {
	l.run = func() error { return l.Kernel.Launch(l.ctx, l) }
	l.task = func() error { return l.cpu(l) }
}

// launchPool holds Launches whose work has finished.
var launchPool = sync.Pool{New: func() any {
	l := new(Launch)
	l.bind()
	return l
}}

var registry struct {
	mu      sync.RWMutex
	byName  map[string]*Kernel
	ordered []*Kernel
	// byOp holds each op's kernels in selection order; a slice is never
	// changed once stored (register stores a new one), so selection reads
	// it without copying.
	byOp map[string][]*Kernel
}

// register adds k to the registry; kernels register through
// RegisterKernel, which makes k. It panics if k is malformed or its name is
// taken: registration happens in init functions, and a clash is a
// programming error.
func register(k Kernel) {
	if k.Name == "" || k.Op == "" || k.Launch == nil || k.Arch.ISA == "" {
		panic(fmt.Sprintf("tcrt: RegisterKernel: kernel %q needs Name, Op, Arch.ISA and Launch", k.Name))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]*Kernel{}
		registry.byOp = map[string][]*Kernel{}
	}
	if _, dup := registry.byName[k.Name]; dup {
		panic("tcrt: RegisterKernel: duplicate kernel " + k.Name)
	}
	kk := k
	registry.byName[k.Name] = &kk
	registry.ordered = append(registry.ordered, &kk)
	before := func(a, b *Kernel) bool {
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		if a.Preference != b.Preference {
			return a.Preference > b.Preference
		}
		return a.Name < b.Name
	}
	sort.SliceStable(registry.ordered, func(i, j int) bool { return before(registry.ordered[i], registry.ordered[j]) })
	ks := append(slices.Clone(registry.byOp[k.Op]), &kk)
	sort.SliceStable(ks, func(i, j int) bool { return before(ks[i], ks[j]) })
	registry.byOp[k.Op] = ks
}

// kernelsOf is Kernels(op) for op ≠ "" without the copy: the caller must
// not change the slice.
func kernelsOf(op string) []*Kernel {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	return registry.byOp[op]
}

func lookupKernel(name string) *Kernel {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	return registry.byName[name]
}

// Kernels returns the registered kernels of op (all ops when op is ""), in
// selection order.
func Kernels(op string) []*Kernel {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	if op != "" {
		return slices.Clone(registry.byOp[op])
	}
	return slices.Clone(registry.ordered)
}

// Candidate is one kernel considered for a call.
type Candidate struct {
	Kernel *Kernel
	Chosen bool
	// Reason says why the kernel was rejected, or why it was chosen.
	Reason string
}

// Explanation lists every candidate for a call, in selection order.
type Explanation struct {
	Op         string
	Candidates []Candidate
	// CPUMask is the CPU feature mask in force when the kernel was chosen
	// (TCRT_CPU, TCRT_CPU_FEATURES; "" for none).
	CPUMask string
	// Backend is the runtime's BackendReason: which backend, and why (on
	// the CPU after auto selection, why the GPU was not used); "" from
	// ExplainOn.
	Backend string
}

// Chosen returns the selected kernel, or nil.
func (e Explanation) Chosen() *Kernel {
	for _, c := range e.Candidates {
		if c.Chosen {
			return c.Kernel
		}
	}
	return nil
}

// String formats the explanation, one candidate a line.
func (e Explanation) String() string {
	return FormatExplanation(e.Op, e.Backend, e.CPUMask, len(e.Candidates), func(i int) (bool, string, int, string, string) {
		c := e.Candidates[i]
		return c.Chosen, c.Kernel.Name, c.Kernel.Preference, c.Kernel.Arch.String(), c.Reason
	})
}

// FormatExplanation is the one text form of an explanation (this
// package's and ops'): the op, the backend and CPU mask lines, then
// candidate i's line from row(i), the chosen one marked "=>".
func FormatExplanation(op, backend, cpuMask string, n int, row func(i int) (chosen bool, name string, pref int, requires, reason string)) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s:\n", op)
	if backend != "" {
		fmt.Fprintf(&sb, "   backend: %s\n", backend)
	}
	if cpuMask != "" {
		fmt.Fprintf(&sb, "   CPU feature mask: %s\n", cpuMask)
	}
	for i := range n {
		chosen, name, pref, requires, reason := row(i)
		mark := "  "
		if chosen {
			mark = "=>"
		}
		fmt.Fprintf(&sb, "%s %-28s pref %3d  [%s]  %s\n", mark, name, pref, requires, reason)
	}
	if n == 0 {
		sb.WriteString("   no kernels registered\n")
	}
	return sb.String()
}

// archReason returns "" if the runtime's device meets a, else why not.
func (r *Runtime) archReason(a Arch) string {
	return archReason(r.be.Device(), r.canLoad, a)
}

// archOK reports whether r.archReason(a) is "", without building the
// reason for the common CPU cases.
func (r *Runtime) archOK(a Arch) bool {
	gpu := r.be.Device().GPU()
	switch a.ISA {
	case ISACPU:
		return !gpu && cpufeat.Has(a.CPUFeatures...)
	case ISAHostFallback:
		return gpu && cpufeat.Has(a.CPUFeatures...)
	case ISASASS, ISAPTX:
		if !gpu {
			return false
		}
	}
	return r.archReason(a) == ""
}

// canLoad reports whether the runtime's device can load m.
func (r *Runtime) canLoad(m *backend.Module) error {
	if ml, ok := r.be.(backend.ModuleLoader); ok {
		return ml.CanLoad(m)
	}
	return DefaultCanLoad(r.be.Device(), m)
}

// DefaultCanLoad is the driver's module rule for dev: the cubin for the
// newest compute capability the device runs, else the PTX when the device
// can compile it (Device.JIT) and is at least its target.
func DefaultCanLoad(dev Device, m *backend.Module) error {
	img, err := m.Select(dev.SM())
	if err != nil {
		return err
	}
	if img.Kind == backend.KindPTX && !dev.JIT {
		return fmt.Errorf("module %s has no cubin for sm_%d and the %s device does not compile PTX: %w", m.Name, dev.SM(), dev.Backend, ErrUnsupported)
	}
	return nil
}

// archReason returns "" if dev meets a, else why not; load says whether
// dev can load a GPU module.
func archReason(dev Device, load func(*backend.Module) error, a Arch) string {
	switch a.ISA {
	case ISACPU:
		if dev.GPU() {
			return fmt.Sprintf("CPU kernel; the %s device is a GPU (its host fallback wraps it)", dev.Backend)
		}
		return cpufeat.Missing(a.CPUFeatures...) // the CPU lacks a feature, or the mask hides it
	case ISAHostFallback:
		if !dev.GPU() {
			return "host fallback for GPU devices; the CPU kernel runs directly here"
		}
		return cpufeat.Missing(a.CPUFeatures...)
	case ISASASS, ISAPTX:
		if !dev.GPU() {
			return fmt.Sprintf("needs a GPU; runtime is on %s", dev.Backend)
		}
		sm := dev.SM()
		if a.MinSM > 0 && sm < a.MinSM {
			return fmt.Sprintf("needs sm_%d or newer, device is sm_%d", a.MinSM, sm)
		}
		if a.MaxSM > 0 && sm > a.MaxSM {
			return fmt.Sprintf("needs at most sm_%d, device is sm_%d", a.MaxSM, sm)
		}
		if a.Module == nil {
			return "no GPU module is embedded for this kernel"
		}
		if err := load(a.Module); err != nil {
			return err.Error()
		}
		return ""
	}
	return fmt.Sprintf("unknown ISA %q", a.ISA)
}

// CPUHas reports whether the CPU has feature f and the feature mask
// (TCRT_CPU, TCRT_CPU_FEATURES) does not hide it.
func CPUHas(f cpuid.FeatureID) bool { return cpufeat.Missing(f) == "" }

// ExplainOn is Explain for a device description instead of an opened
// runtime (a test or a capacity plan may construct one): it applies the
// same rules, with DefaultCanLoad for modules and no forced kernels.
func ExplainOn(dev Device, op string, args any) Explanation {
	return explain(op, args, "", func(a Arch) string {
		return archReason(dev, func(m *backend.Module) error { return DefaultCanLoad(dev, m) }, a)
	})
}

// Explain lists every kernel registered for op and says, for the call
// described by args, why each was taken or rejected. The first kernel that
// can run the call wins, unless one is forced.
func (r *Runtime) Explain(op string, args any) Explanation {
	if r.CheckArgs(op, args) != nil { // a nil or closed runtime, or malformed args
		return Explanation{Op: op, Backend: r.BackendReason()}
	}
	e := explain(op, args, r.forcedFor(op), r.archReason)
	e.Backend = r.BackendReason()
	return e
}

// forcedFor is the kernel forced for op; on a GPU device a forced CPU
// kernel means its host fallback.
func (r *Runtime) forcedFor(op string) string {
	f := r.forced[op]
	if f != "" && r.be.Device().GPU() {
		if k := lookupKernel(f); k != nil && k.Arch.ISA == ISACPU {
			f = hostFallbackPrefix + f
		}
	}
	return f
}

func explain(op string, args any, forced string, archReason func(Arch) string) Explanation {
	e := Explanation{Op: op, CPUMask: cpufeat.String()}
	chosen := false
	for _, k := range Kernels(op) {
		c := Candidate{Kernel: k}
		reason := archReason(k.Arch)
		if reason == "" && k.Supports != nil {
			if err := k.Supports(args); err != nil {
				reason = err.Error()
			}
		}
		switch {
		case forced != "" && k.Name != forced:
			if reason == "" {
				reason = "could run, but " + forced + " is forced (Options.Kernel, TCRT_KERNEL)"
			}
		case reason != "":
			if forced != "" {
				reason = "forced (Options.Kernel, TCRT_KERNEL) but cannot run: " + reason
			}
		case chosen:
			reason = "could run; a preferred kernel was chosen"
		default:
			chosen, c.Chosen = true, true
			reason = "chosen"
			if forced != "" {
				reason = "chosen: forced (Options.Kernel, TCRT_KERNEL)"
			}
		}
		c.Reason = reason
		e.Candidates = append(e.Candidates, c)
	}
	return e
}

// Select returns the kernel Explain would choose, or an error wrapping
// ErrUnsupported that carries the explanation. It stops at the first
// kernel that can run the call, without writing the reasons for the
// others (a call's selection then costs a few microseconds less, which a
// small op notices); the explanation is built when no kernel can.
func (r *Runtime) Select(op string, args any) (*Kernel, error) {
	if err := r.CheckArgs(op, args); err != nil {
		return nil, err
	}
	return r.pick(op, args)
}

// pick is Select after CheckArgs.
func (r *Runtime) pick(op string, args any) (*Kernel, error) {
	forced := r.forcedFor(op)
	for _, k := range kernelsOf(op) {
		// explain's rule: the first kernel that can run the call, the
		// forced one only when one is forced.
		if forced != "" && k.Name != forced || !r.archOK(k.Arch) || k.Supports != nil && k.Supports(args) != nil {
			continue
		}
		return k, nil
	}
	e := explain(op, args, forced, r.archReason)
	if k := e.Chosen(); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("tcrt: %s: no kernel can run this call on %s:\n%s%w", op, r.be.Kind(), e, ErrUnsupported)
}

// Run selects a kernel for op and launches it on s. With a nil stream it
// runs on the default stream and waits for the result (returning the
// kernel's error); with a stream it only enqueues. A synchronous CPU launch
// finding the default stream idle runs the kernel on the calling goroutine
// (CPUKernel), and ctx cannot interrupt it there; otherwise ctx ends the
// wait, not the work.
func (r *Runtime) Run(ctx context.Context, s *Stream, op string, args any) error {
	k, err := r.Select(op, args)
	if err != nil {
		return err
	}
	return r.launch(ctx, s, k, args)
}

// Prepared is a call checked (CheckArgs) with its kernel selected, ready
// to launch on its stream any number of times: what Run does after
// selection. Make one with Prepare; the zero value launches nothing and
// returns an error wrapping ErrArgument.
type Prepared struct {
	r    *Runtime
	s    *Stream
	k    *Kernel
	args any
}

// Prepare checks a call of op and selects its kernel as Run does, and
// returns it prepared for launches on s (nil: synchronous on the default
// stream). args must not change afterwards. A buffer, stream or runtime
// closed between Prepare and a launch fails that launch with ErrClosed.
func (r *Runtime) Prepare(s *Stream, op string, args any) (Prepared, error) {
	k, err := r.Select(op, args)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{r: r, s: s, k: k, args: args}, nil
}

// Launch launches the prepared call with Run's stream rule, without
// checking or selecting again.
func (p Prepared) Launch(ctx context.Context) error {
	if p.r == nil {
		return fmt.Errorf("tcrt: launch: a zero Prepared (make one with Runtime.Prepare): %w", ErrArgument)
	}
	return p.r.launch(ctx, p.s, p.k, p.args)
}

// Kernel is the kernel selected for the call (nil for the zero value).
func (p Prepared) Kernel() *Kernel { return p.k }

// Args is the call's argument struct.
func (p Prepared) Args() any { return p.args }

// Explain is the runtime's explanation of the call's selection.
func (p Prepared) Explain() Explanation {
	if p.r == nil {
		return Explanation{}
	}
	return p.r.Explain(p.k.Op, p.args)
}

// LaunchKernel launches k (which must be able to run args) on s, with Run's
// nil-stream rule.
func (r *Runtime) LaunchKernel(ctx context.Context, s *Stream, k *Kernel, args any) error {
	if k == nil {
		return fmt.Errorf("tcrt: launch kernel: argument kernel: nil: %w", ErrArgument)
	}
	if err := r.CheckArgs(k.Op, args); err != nil {
		return err
	}
	return r.launch(ctx, s, k, args)
}

// launch is LaunchKernel once args have passed CheckArgs for k.Op.
func (r *Runtime) launch(ctx context.Context, s *Stream, k *Kernel, args any) error {
	if ctx == nil {
		return fmt.Errorf("tcrt: %s: argument ctx: nil: %w", k.Op, ErrArgument)
	}
	sync := s == nil
	if sync {
		s = r.def
	}
	if err := s.check(op(k)); err != nil {
		return err
	}
	if s.rt != r {
		return fmt.Errorf("tcrt: %s: argument stream: belongs to another runtime: %w", k.Op, ErrArgument)
	}
	// The launch holds every buffer it names until its work has finished
	// (see Buffer: Lifetimes).
	var held [MaxOperands]*Buffer
	rs := refs(argBuffers(held[:0], args))
	if err := hold(k.Op, rs); err != nil {
		return err
	}
	if _, cpu := s.impl.(*backend.Queue); sync && !cpu {
		// A synchronous call reports its own error: what earlier work on
		// the default stream reported waits for its Synchronize (on the
		// CPU, CPUKernel does this when it cannot run inline).
		if err := s.setAsideErrors(ctx); err != nil {
			rs.release()
			return err
		}
	}
	l := launchPool.Get().(*Launch)
	l.Runtime, l.Stream, l.Kernel, l.Args, l.Threads, l.sync, l.ctx = r, s, k, args, r.opts.Threads, sync, ctx
	// A kernel that panics on the caller's goroutine returns ErrDevice, and
	// the buffers the launch holds are released as after any failure.
	err := backend.RunTask(l.run)
	if l.inlined {
		// finished on this goroutine: nothing else holds l
		rs.release()
		l.Runtime, l.Stream, l.Kernel, l.Args, l.ctx, l.cpu, l.inlined = nil, nil, nil, nil, nil, nil, false
		launchPool.Put(l)
		return err
	}
	s.releaseAfter(slices.Clone(rs)) // also after a failed launch: part of it may be queued
	if err != nil || !sync {
		return err
	}
	return s.syncOwn(ctx)
}

func op(k *Kernel) string { return k.Op }

package runtime

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// Arch is what a kernel needs of the device.
type Arch struct {
	// Backend is the backend the kernel runs on.
	Backend BackendKind
	// CPUFeatures are cpuid features the CPU must have (CPU kernels).
	CPUFeatures []cpuid.FeatureID
	// MinSM and MaxSM bound the GPU compute capability, as 86 for 8.6; 0 means
	// unbounded. A SASS cubin for sm_86 runs on 86 ≤ SM ≤ 89.
	MinSM, MaxSM int
	// PTX marks kernels shipped as PTX, compiled by the driver for any SM ≥
	// MinSM.
	PTX bool
}

// String describes the requirement.
func (a Arch) String() string {
	var parts []string
	parts = append(parts, string(a.Backend))
	for _, f := range a.CPUFeatures {
		parts = append(parts, f.String())
	}
	if a.PTX {
		parts = append(parts, "ptx")
	}
	if a.MinSM > 0 || a.MaxSM > 0 {
		parts = append(parts, fmt.Sprintf("sm_%d..%d", a.MinSM, a.MaxSM))
	}
	return strings.Join(parts, "+")
}

// Kernel is one implementation of one op. Every implementation registers
// once, with Register, from an init function.
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

// Launch is one call of a kernel.
type Launch struct {
	Runtime *Runtime
	Stream  *Stream
	Kernel  *Kernel
	Args    any
	Threads int // CPU goroutines the kernel may use

	sync    bool // the caller waits for the launch (a nil stream)
	inlined bool // CPUKernel ran it on the caller's goroutine
}

var registry struct {
	mu      sync.RWMutex
	byName  map[string]*Kernel
	ordered []*Kernel
}

// Register adds k to the registry. It panics if k is malformed or its name
// is taken: registration happens in init functions, and a clash is a
// programming error.
func Register(k Kernel) {
	if k.Name == "" || k.Op == "" || k.Launch == nil || k.Arch.Backend == "" {
		panic(fmt.Sprintf("tcrt: Register: kernel %q needs Name, Op, Arch.Backend and Launch", k.Name))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.byName == nil {
		registry.byName = map[string]*Kernel{}
	}
	if _, dup := registry.byName[k.Name]; dup {
		panic("tcrt: Register: duplicate kernel " + k.Name)
	}
	kk := k
	registry.byName[k.Name] = &kk
	registry.ordered = append(registry.ordered, &kk)
	sort.SliceStable(registry.ordered, func(i, j int) bool {
		a, b := registry.ordered[i], registry.ordered[j]
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		if a.Preference != b.Preference {
			return a.Preference > b.Preference
		}
		return a.Name < b.Name
	})
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
	var out []*Kernel
	for _, k := range registry.ordered {
		if op == "" || k.Op == op {
			out = append(out, k)
		}
	}
	return out
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
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s:\n", e.Op)
	if e.CPUMask != "" {
		fmt.Fprintf(&sb, "   CPU feature mask: %s\n", e.CPUMask)
	}
	for _, c := range e.Candidates {
		mark := "  "
		if c.Chosen {
			mark = "=>"
		}
		fmt.Fprintf(&sb, "%s %-28s pref %3d  [%s]  %s\n", mark, c.Kernel.Name, c.Kernel.Preference, c.Kernel.Arch, c.Reason)
	}
	if len(e.Candidates) == 0 {
		sb.WriteString("   no kernels registered\n")
	}
	return sb.String()
}

// archReason returns "" if the runtime's device meets a, else why not.
func (r *Runtime) archReason(a Arch) string {
	dev := r.be.device()
	if a.Backend != dev.Backend {
		return fmt.Sprintf("needs the %s backend, runtime is on %s", a.Backend, dev.Backend)
	}
	if why := cpufeat.Missing(a.CPUFeatures...); why != "" {
		return why // the CPU lacks a feature, or the mask hides it
	}
	if a.Backend == BackendCUDA {
		sm := dev.SM()
		if a.MinSM > 0 && sm < a.MinSM {
			return fmt.Sprintf("needs sm_%d or newer, device is sm_%d", a.MinSM, sm)
		}
		if a.MaxSM > 0 && sm > a.MaxSM {
			return fmt.Sprintf("needs at most sm_%d, device is sm_%d", a.MaxSM, sm)
		}
	}
	return ""
}

// Explain lists every kernel registered for op and says, for the call
// described by args, why each was taken or rejected. The first kernel that
// can run the call wins, unless one is forced.
func (r *Runtime) Explain(op string, args any) Explanation {
	e := Explanation{Op: op, CPUMask: cpufeat.String()}
	forced := r.forced[op]
	chosen := false
	for _, k := range Kernels(op) {
		c := Candidate{Kernel: k}
		reason := r.archReason(k.Arch)
		if reason == "" && k.Supports != nil {
			if err := k.Supports(args); err != nil {
				reason = err.Error()
			}
		}
		switch {
		case forced != "" && k.Name != forced:
			if reason == "" {
				reason = "could run, but " + forced + " is forced (TCRT_KERNEL)"
			}
		case reason != "":
			if forced != "" {
				reason = "forced (TCRT_KERNEL) but cannot run: " + reason
			}
		case chosen:
			reason = "could run; a preferred kernel was chosen"
		default:
			chosen, c.Chosen = true, true
			reason = "chosen"
			if forced != "" {
				reason = "chosen: forced by TCRT_KERNEL"
			}
		}
		c.Reason = reason
		e.Candidates = append(e.Candidates, c)
	}
	return e
}

// Select returns the kernel Explain would choose, or an error wrapping
// ErrUnsupported that carries the explanation.
func (r *Runtime) Select(op string, args any) (*Kernel, error) {
	if err := r.checkOpen(op); err != nil {
		return nil, err
	}
	e := r.Explain(op, args)
	if k := e.Chosen(); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("tcrt: %s: no kernel can run this call on %s:\n%s%w", op, r.be.kind(), e, ErrUnsupported)
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
	return r.LaunchKernel(ctx, s, k, args)
}

// LaunchKernel launches k (which must be able to run args) on s, with Run's
// nil-stream rule.
func (r *Runtime) LaunchKernel(ctx context.Context, s *Stream, k *Kernel, args any) error {
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
	l := &Launch{Runtime: r, Stream: s, Kernel: k, Args: args, Threads: r.opts.Threads, sync: sync}
	err := k.Launch(ctx, l)
	if err != nil || l.inlined || !sync {
		return err
	}
	return s.Synchronize(ctx)
}

func op(k *Kernel) string { return k.Op }

// CPUKernel adapts a synchronous host function into a Kernel.Launch that
// enqueues it on the stream. A synchronous launch (nil stream) on an idle
// CPU stream runs it on the caller's goroutine instead, with the same
// ordering and error reporting.
func CPUKernel(fn func(l *Launch) error) func(context.Context, *Launch) error {
	return func(_ context.Context, l *Launch) error {
		task := func() error { return fn(l) }
		if cs, ok := l.Stream.impl.(*cpuStream); ok && l.sync {
			if ran, err := cs.runInline(task); ran {
				l.inlined = true
				return err
			}
		}
		return l.Stream.Enqueue(task)
	}
}

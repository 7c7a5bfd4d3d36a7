package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"sync"
)

// Host fallback: how a GPU runtime runs an op no GPU kernel covers.
//
// CPU kernels need host bytes (Buffer.Host), which device memory does not
// have, and archReason rejects them on a GPU device. So when a runtime
// opens on a GPU backend (any: CUDA, the simulator, or another registered
// one), ensureHostFallbacks registers, for every CPU kernel not yet
// wrapped, a wrapper kernel "host.<name>" of ISA ISAHostFallback, which
// runs on every GPU device, with the CPU kernel's Supports and a preference
// a million below it, so that any real GPU kernel wins and Explain shows
// the wrapper (and why it was or was not chosen) like any other candidate. The wrapper enqueues one host task on the call's
// stream, which (after the stream's earlier device work has finished):
//
//  1. finds every buffer the op's argument struct lists (Args.Operands);
//  2. copies each to a host shadow and lends it to the buffer, so Host()
//     returns it while the task runs;
//  3. runs the CPU kernel synchronously on a private CPU stream;
//  4. copies back only the byte ranges the kernel changed, so inputs are
//     never written (another stream may be using them).
//
// It is slow (every operand crosses the bus twice), correct for kernels that
// write only their outputs, and serialized per process. Forcing a fallback
// by name (TCRT_KERNEL=host.cpu.matmul.reference) works on any GPU
// backend.

// hostFallbackPrefix starts the names of the wrapper kernels.
const hostFallbackPrefix = "host."

// hostFallbackPenalty is subtracted from the CPU kernel's preference.
const hostFallbackPenalty = 1_000_000

var hostFallbacks struct {
	mu      sync.Mutex
	wrapped map[string]bool // CPU kernel names already wrapped
}

// ensureHostFallbacks registers a wrapper for every CPU kernel not yet
// wrapped. The wrappers serve every GPU device, so one set serves every GPU
// backend.
func ensureHostFallbacks() {
	hostFallbacks.mu.Lock()
	defer hostFallbacks.mu.Unlock()
	if hostFallbacks.wrapped == nil {
		hostFallbacks.wrapped = map[string]bool{}
	}
	for _, k := range Kernels("") {
		if k.Arch.ISA != ISACPU || hostFallbacks.wrapped[k.Name] {
			continue
		}
		hostFallbacks.wrapped[k.Name] = true
		inner := k
		register(Kernel{
			Name:       hostFallbackPrefix + inner.Name,
			Op:         inner.Op,
			Arch:       Arch{ISA: ISAHostFallback, CPUFeatures: inner.Arch.CPUFeatures},
			Preference: inner.Preference - hostFallbackPenalty,
			Doc:        "host fallback: stages the operands through host memory and runs " + inner.Name,
			Supports: func(args any) error {
				if inner.Supports == nil {
					return nil
				}
				return inner.Supports(args)
			},
			Launch: func(ctx context.Context, l *Launch) error {
				return l.Stream.Enqueue(func() error { return runHostFallback(ctx, l, inner) })
			},
		})
	}
}

// hostFallbackMu serializes fallback tasks: a buffer lends one shadow at a
// time.
var hostFallbackMu sync.Mutex

// dirtyChunk is the granularity of the write-back comparison.
const dirtyChunk = 4096

func runHostFallback(ctx context.Context, l *Launch, inner *Kernel) error {
	what := fmt.Sprintf("%s: host fallback %s", inner.Op, inner.Name)
	// Every buffer of the call, closed ones included: the launch holds them
	// (a buffer closed while the call is queued is still this call's).
	return withHostBuffers(ctx, what, argBuffers(nil, l.Args), func() error {
		cpu := &Stream{rt: l.Runtime, impl: backend.NewQueue()}
		defer cpu.impl.Close()
		il := &Launch{Runtime: l.Runtime, Stream: cpu, Kernel: inner, Args: l.Args, Threads: l.Threads}
		if err := inner.Launch(ctx, il); err != nil {
			return err
		}
		return cpu.impl.Sync(ctx)
	})
}

// WithHostArgs runs fn with every buffer args (an op's argument struct,
// Args) lists readable and writable through Buffer.Host, on any
// backend: device buffers lend host copies while fn runs, and the byte
// ranges fn changed are written back afterwards. It synchronizes the
// runtime first. Tests use it to run a fallback reference on the
// arguments of a call made on a GPU device; it is slow.
func WithHostArgs(ctx context.Context, rt *Runtime, args any, fn func() error) error {
	if err := rt.Synchronize(ctx); err != nil {
		return err
	}
	return withHostBuffers(ctx, "with host args", bufferRefs(args), fn)
}

// withHostBuffers stages bufs through host shadows around fn.
func withHostBuffers(ctx context.Context, what string, bufs []*Buffer, fn func() error) (err error) {
	hostFallbackMu.Lock()
	defer hostFallbackMu.Unlock()
	type staged struct {
		m          backend.Stageable
		host, orig []byte
	}
	var st []staged
	defer func() {
		for _, s := range st {
			s.m.SetStaged(nil)
		}
	}()
	total := 0
	for _, b := range bufs {
		total += b.Bytes()
	}
	// each staged buffer has a shadow and a copy of it (for the write-back)
	if err := CheckHostAlloc(what, "operands", total, 2); err != nil {
		return err
	}
	seen := map[backend.Memory]bool{}
	for _, b := range bufs {
		mem := b.memory()
		if mem == nil || seen[mem] {
			continue
		}
		seen[mem] = true
		m, ok := mem.(backend.Stageable)
		if !ok {
			if mem.Host() != nil {
				continue // already host memory
			}
			return fmt.Errorf("tcrt: %s: a buffer's memory cannot be staged: %w", what, ErrUnsupported)
		}
		host, err := alignedBytes(b.Bytes())
		if err != nil {
			return fmt.Errorf("tcrt: %s: staging an operand: %w", what, err)
		}
		if err := m.Read(ctx, 0, host); err != nil {
			return fmt.Errorf("tcrt: %s: staging an operand in: %w", what, err)
		}
		st = append(st, staged{m: m, host: host, orig: bytes.Clone(host)})
		m.SetStaged(host)
	}
	if err := fn(); err != nil {
		return err
	}
	var errs []error
	for _, s := range st {
		for _, r := range dirtyRanges(s.orig, s.host, dirtyChunk) {
			if err := s.m.Write(ctx, r[0], s.host[r[0]:r[1]]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tcrt: %s: writing results back: %w", what, err)
	}
	return nil
}

// dirtyRanges returns the [lo, hi) byte ranges, in chunks of chunk bytes
// merged when adjacent, where now differs from was.
func dirtyRanges(was, now []byte, chunk int) [][2]int {
	var out [][2]int
	for lo := 0; lo < len(now); lo += chunk {
		hi := min(lo+chunk, len(now))
		if bytes.Equal(was[lo:hi], now[lo:hi]) {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == lo {
			out[n-1][1] = hi
		} else {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// bufferRefs returns the distinct open buffers args' operands name (Args),
// in operand order.
func bufferRefs(args any) []*Buffer {
	all := argBuffers(nil, args)
	out := all[:0]
	for _, b := range all {
		if !b.Closed() {
			out = append(out, b)
		}
	}
	return out
}

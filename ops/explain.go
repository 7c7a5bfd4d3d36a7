package ops

import "github.com/tcrt-go/tcrt/internal/engine"

// Explanation lists every kernel registered for an op call, in selection
// order, and says why each was taken or rejected: what the Explain…
// functions and Call.Explain return.
type Explanation struct {
	Op         string
	Candidates []Candidate
	// CPUMask is the CPU feature mask in force when the kernel was chosen
	// (TCRT_CPU, TCRT_CPU_FEATURES; "" for none).
	CPUMask string
	// Backend is the runtime's BackendReason: which backend, and why (on
	// the CPU after auto selection, why the GPU was not used).
	Backend string
}

// Candidate is one kernel Explain considered.
type Candidate struct {
	Kernel KernelInfo
	Chosen bool
	// Reason says why the kernel was rejected, or why it was chosen.
	Reason string
}

// KernelInfo describes a registered kernel. Its Name is what
// runtime.Options.Kernel (TCRT_KERNEL) forces.
type KernelInfo struct {
	Name string // unique, e.g. "cpu.matmul.avx512"
	Op   string // the op it implements, e.g. "matmul"
	// Requires is what it needs of the device: the ISA (cpu, sass, ptx,
	// host), then the SM range or the CPU features, e.g. "sass sm86-89".
	Requires string
	// Preference orders the kernels that can all run a call: higher wins.
	Preference int
	Doc        string // one line
}

// Chosen returns the selected kernel, or nil.
func (e Explanation) Chosen() *KernelInfo {
	for i := range e.Candidates {
		if e.Candidates[i].Chosen {
			return &e.Candidates[i].Kernel
		}
	}
	return nil
}

// String formats the explanation, one candidate a line.
func (e Explanation) String() string {
	return engine.FormatExplanation(e.Op, e.Backend, e.CPUMask, len(e.Candidates), func(i int) (bool, string, int, string, string) {
		c := e.Candidates[i]
		return c.Chosen, c.Kernel.Name, c.Kernel.Preference, c.Kernel.Requires, c.Reason
	})
}

// publicExplanation is e without engine pointers.
func publicExplanation(e engine.Explanation) Explanation {
	p := Explanation{Op: e.Op, CPUMask: e.CPUMask, Backend: e.Backend}
	if len(e.Candidates) > 0 {
		p.Candidates = make([]Candidate, len(e.Candidates))
	}
	for i, c := range e.Candidates {
		k := c.Kernel
		p.Candidates[i] = Candidate{Chosen: c.Chosen, Reason: c.Reason,
			Kernel: KernelInfo{Name: k.Name, Op: k.Op, Requires: k.Arch.String(), Preference: k.Preference, Doc: k.Doc}}
	}
	return p
}

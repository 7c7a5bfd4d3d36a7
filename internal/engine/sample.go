package engine

import "github.com/tcrt-go/tcrt/fallback"

// OpSample is sampling from logits.
var OpSample = Op[SampleArgs]{"sample"}

// SampleArgs is a validated sampling call (see fallback.SampleArgs for the
// rules): Logits is Rows × Vocab, Out an s32 buffer of at least Rows
// elements.
type SampleArgs struct {
	Logits       Matrix
	Out          *Buffer
	Temperature  float32
	TopK         int
	TopP, MinP   float32
	Seed, Offset uint64
}

// HostSampleArgs converts a CPU-backend call into the fallback's form.
func HostSampleArgs(a *SampleArgs, threads int) *fallback.SampleArgs {
	return hostSampleInto(new(hostCall[fallback.SampleArgs]), a, threads)
}

// hostSampleInto is HostSampleArgs into c.
func hostSampleInto(c *hostCall[fallback.SampleArgs], a *SampleArgs, threads int) *fallback.SampleArgs {
	c.h = fallback.SampleArgs{
		Logits: hostRows(a.Logits), Out: hostS32(a.Out)[:a.Logits.Rows],
		Temperature: a.Temperature, TopK: a.TopK, TopP: a.TopP, MinP: a.MinP,
		Seed: a.Seed, Offset: a.Offset, Threads: threads,
	}
	return &c.h
}

func init() {
	refAndFast(OpSample, "no sort: a three-level radix select on the scores' bits finds the top-k and top-p cuts; rows across the helper pool",
		func(a *SampleArgs, th int) error {
			return withHost(&hostSamples, a, th, hostSampleInto, func(h *fallback.SampleArgs) error { fallback.SampleRef(h); return nil })
		},
		func(a *SampleArgs, th int) error {
			return withHost(&hostSamples, a, th, hostSampleInto, func(h *fallback.SampleArgs) error { fallback.SampleFast(h); return nil })
		})
}

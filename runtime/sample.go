package runtime

import "github.com/tcrt-go/tcrt/fallback"

// OpSample is the registry name of sampling from logits.
const OpSample = "sample"

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
	return &fallback.SampleArgs{
		Logits: hostRows(a.Logits), Out: hostS32(a.Out)[:a.Logits.Rows],
		Temperature: a.Temperature, TopK: a.TopK, TopP: a.TopP, MinP: a.MinP,
		Seed: a.Seed, Offset: a.Offset, Threads: threads,
	}
}

func init() {
	refAndFast(OpSample, OpSample, "no sort: a three-level radix select on the scores' bits finds the top-k and top-p cuts; rows across the helper pool",
		func(a *SampleArgs, th int) error { fallback.SampleRef(HostSampleArgs(a, th)); return nil },
		func(a *SampleArgs, th int) error { fallback.SampleFast(HostSampleArgs(a, th)); return nil })
}

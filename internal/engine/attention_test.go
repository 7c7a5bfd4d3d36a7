package engine_test

import (
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/engine"
)

// TestAttentionKernelsRegistered checks that the CPU attention kernels and
// the KV append are registered, the reference last, and that TCRT_KERNEL
// style forcing selects the reference.
func TestAttentionKernelsRegistered(t *testing.T) {
	var ks []*engine.Kernel
	for _, k := range engine.Kernels(engine.OpAttention.Name()) {
		if k.Arch.ISA == engine.ISACPU { // other tests may add host.* wrappers
			ks = append(ks, k)
		}
	}
	if len(ks) < 2 || ks[len(ks)-1].Name != "cpu.attention.reference" {
		t.Fatalf("attention kernels %v: want the fast variants then cpu.attention.reference", names(ks))
	}
	if n := len(engine.Kernels(engine.OpKVAppend.Name())); n != 1 && n != 2 {
		t.Fatalf("kv append kernels: %v", names(engine.Kernels(engine.OpKVAppend.Name())))
	}
	rt, err := engine.Open(engine.Options{Backend: engine.BackendCPU, Kernel: "cpu.attention.reference"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	b, err := rt.Alloc(1, 1, 1, 1, 8) // f32
	if err != nil {
		t.Fatal(err)
	}
	v := engine.AttnView{Buf: b, Batch: 1, Seq: 1, Heads: 1, HeadDim: 8, BatchStride: 8, SeqStride: 8, HeadStride: 8}
	o := v
	if o.Buf, err = rt.Alloc(1, 1, 1, 1, 8); err != nil { // the output may not alias an input
		t.Fatal(err)
	}
	args := &engine.AttentionArgs{Batch: 1, HeadsQ: 1, HeadsKV: 1, HeadDim: 8, SeqQ: 1, SeqKV: 1, Q: v, K: v, V: v, O: o}
	e := rt.Explain(engine.OpAttention.Name(), args)
	if k := e.Chosen(); k == nil || k.Name != "cpu.attention.reference" {
		t.Fatalf("forced reference not chosen:\n%s", e)
	}
	if !strings.Contains(e.String(), "forced") {
		t.Errorf("explanation does not mention forcing:\n%s", e)
	}
}

func names(ks []*engine.Kernel) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Name)
	}
	return out
}

package runtime_test

import (
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/runtime"
)

// TestAttentionKernelsRegistered checks that the CPU attention kernels and
// the KV append are registered, the reference last, and that TCRT_KERNEL
// style forcing selects the reference.
func TestAttentionKernelsRegistered(t *testing.T) {
	var ks []*runtime.Kernel
	for _, k := range runtime.Kernels(runtime.OpAttention) {
		if k.Arch.ISA == runtime.ISACPU { // other tests may add host.* wrappers
			ks = append(ks, k)
		}
	}
	if len(ks) < 2 || ks[len(ks)-1].Name != "cpu.attention.reference" {
		t.Fatalf("attention kernels %v: want the fast variants then cpu.attention.reference", names(ks))
	}
	if n := len(runtime.Kernels(runtime.OpKVAppend)); n != 1 && n != 2 {
		t.Fatalf("kv append kernels: %v", names(runtime.Kernels(runtime.OpKVAppend)))
	}
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU, Kernel: "cpu.attention.reference"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	b, err := rt.Alloc(1, 1, 1, 1, 8) // f32
	if err != nil {
		t.Fatal(err)
	}
	v := runtime.AttnView{Buf: b, Batch: 1, Seq: 1, Heads: 1, HeadDim: 8, BatchStride: 8, SeqStride: 8, HeadStride: 8}
	o := v
	if o.Buf, err = rt.Alloc(1, 1, 1, 1, 8); err != nil { // the output may not alias an input
		t.Fatal(err)
	}
	args := &runtime.AttentionArgs{Batch: 1, HeadsQ: 1, HeadsKV: 1, HeadDim: 8, SeqQ: 1, SeqKV: 1, Q: v, K: v, V: v, O: o}
	e := rt.Explain(runtime.OpAttention, args)
	if k := e.Chosen(); k == nil || k.Name != "cpu.attention.reference" {
		t.Fatalf("forced reference not chosen:\n%s", e)
	}
	if !strings.Contains(e.String(), "forced") {
		t.Errorf("explanation does not mention forcing:\n%s", e)
	}
}

func names(ks []*runtime.Kernel) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Name)
	}
	return out
}

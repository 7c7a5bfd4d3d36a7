package engine

import (
	"sync"

	"github.com/tcrt-go/tcrt/fallback"
)

// hostCall is the fallback's form H of one CPU call, with room for the
// optional views it points at. CPU kernels take one from a hostPool and
// give it back when the fallback returns (it runs synchronously and keeps
// nothing), so converting a call's arguments allocates nothing.
type hostCall[H any] struct {
	h   H
	opt [2]fallback.Matrix
}

// rows is hostRows of an optional view, stored in slot i of c.
func (c *hostCall[H]) rows(i int, m *Matrix) *fallback.Matrix {
	if m == nil {
		return nil
	}
	c.opt[i] = hostRows(*m)
	return &c.opt[i]
}

// hostPool recycles hostCalls of one fallback argument type.
type hostPool[H any] struct{ p sync.Pool }

// withHost converts a (threads: th) into a pooled hostCall with into and
// runs fn on the result.
func withHost[H, A any](hp *hostPool[H], a *A, th int, into func(*hostCall[H], *A, int) *H, fn func(*H) error) error {
	c, ok := hp.p.Get().(*hostCall[H])
	if !ok {
		c = new(hostCall[H])
	}
	err := fn(into(c, a, th))
	*c = hostCall[H]{}
	hp.p.Put(c)
	return err
}

// The pools of the CPU kernels' fallback arguments.
var (
	hostMatMuls    hostPool[fallback.MatMulArgs]
	hostAttentions hostPool[fallback.AttentionArgs]
	hostKVAppends  hostPool[fallback.KVAppendArgs]
	hostNorms      hostPool[fallback.NormArgs]
	hostActs       hostPool[fallback.ActArgs]
	hostElts       hostPool[fallback.EltArgs]
	hostRoPEs      hostPool[fallback.RoPEArgs]
	hostSamples    hostPool[fallback.SampleArgs]
	hostSoftmaxes  hostPool[fallback.SoftmaxArgs]
	hostGathers    hostPool[fallback.GatherArgs]
)

package engine

import "github.com/tcrt-go/tcrt/fallback"

// OpRoPE is the rotary embedding.
var OpRoPE = Op[RoPEArgs]{"rope"}

// RoPEArgs is a validated rotary embedding (see fallback.RoPEArgs): Q and K
// (K optional) are Tokens × Heads·HeadDim views, rotated into QOut and KOut
// (the same views for in place). Positions is an s32 buffer of one position
// per token, or nil, and then HostPositions holds them (from per-sequence
// offsets). Theta and Scaling give the frequencies; every position must be
// below MaxPosition (the kernel checks data it alone sees).
type RoPEArgs struct {
	Q, QOut            Matrix
	K, KOut            *Matrix
	HeadsQ, HeadsK     int
	HeadDim, RotaryDim int
	Interleaved        bool
	Positions          *Buffer
	HostPositions      []int32
	MaxPosition        int
	Theta              float64
	Scaling            RoPEScaling
}

// HostRoPEArgs converts a CPU-backend call into the fallback's form.
func HostRoPEArgs(a *RoPEArgs, threads int) *fallback.RoPEArgs {
	return hostRoPEInto(new(hostCall[fallback.RoPEArgs]), a, threads)
}

// hostRoPEInto is HostRoPEArgs into c.
func hostRoPEInto(c *hostCall[fallback.RoPEArgs], a *RoPEArgs, threads int) *fallback.RoPEArgs {
	h := &c.h
	ropeTableInto(h, a)
	if a.Positions != nil {
		h.Pos = hostS32(a.Positions)[:a.Q.Rows]
	}
	h.Q, h.QOut, h.K, h.KOut = hostRows(a.Q), hostRows(a.QOut), c.rows(0, a.K), c.rows(1, a.KOut)
	h.Threads = threads
	return h
}

// ropeTable is the part of the fallback's form that needs no tensor data:
// frequencies, host positions and bounds (what the GPU launch uses to
// build its cos/sin table, on buffers that have no host memory).
func ropeTable(a *RoPEArgs) *fallback.RoPEArgs {
	h := new(fallback.RoPEArgs)
	ropeTableInto(h, a)
	return h
}

// ropeTableInto is ropeTable into h: the frequencies and the cos/sin
// cache of the parameters (fallback.RoPETableOf, shared by every call
// with the same theta, rotary dimension and scaling).
func ropeTableInto(h *fallback.RoPEArgs, a *RoPEArgs) {
	t := fallback.RoPETableOf(a.Theta, a.RotaryDim, a.Scaling)
	*h = fallback.RoPEArgs{
		HeadsQ: a.HeadsQ, HeadsK: a.HeadsK, HeadDim: a.HeadDim, RotaryDim: a.RotaryDim,
		Interleaved: a.Interleaved, Pos: a.HostPositions, MaxPosition: a.MaxPosition,
		InvFreq: t.InvFreq, MScale: t.MScale, Table: t,
	}
}

func init() {
	refAndFast(OpRoPE, "cos and sin once per token for every head of q and k; "+lightFastDoc,
		func(a *RoPEArgs, th int) error { return withHost(&hostRoPEs, a, th, hostRoPEInto, fallback.RoPERef) },
		func(a *RoPEArgs, th int) error { return withHost(&hostRoPEs, a, th, hostRoPEInto, fallback.RoPEFast) })
}

package sim

import "github.com/tcrt-go/tcrt/sass"

// Simulation of the instructions the mma.sync kernels (kernels/mma,
// opcodes.go) add: P2R, SGXT, HMUL2 by an f16x2 immediate (decoded as
// an immediate source), DEPBAR with a scoreboard set and the predicated
// (zero-filling) LDGSTS forms.

// decodeP2R decodes P2R Rd, PR, RZ, mask: the predicates P0..P6 selected
// by mask into bits 0..6 of Rd. The byte selects (.B1-.B3) and a merge
// register other than RZ are refused: ptxas emits neither in these
// kernels and their merge rule is not measured.
func decodeP2R(d *dinst, in sass.Inst) error {
	a := in.Args
	if len(a) != 4 || a[0].Kind != sass.KReg || a[1].Kind != sass.KPredFile || a[2].Kind != sass.KReg || a[3].Kind != sass.KImm {
		return bad("P2R: operands")
	}
	if len(in.Mods) != 0 {
		return bad("P2R.%v: byte selects not modelled", in.Mods)
	}
	if a[2].N != 255 {
		return bad("P2R: merge register %v not modelled (only RZ)", sass.Reg(a[2].N))
	}
	m := uint32(a[3].Imm)
	if m&^0x7f != 0 {
		return bad("P2R: mask %#x selects bits above P6", m)
	}
	d.op, d.n = xP2R, int(m)
	for p := 0; p < 7; p++ {
		if m>>p&1 != 0 {
			d.reads = append(d.reads, span{1, uint8(p), 1})
		}
	}
	return nil
}

// decodeR2P decodes R2P PR, Ra, mask: bits 0..6 of Ra into the predicates
// P0..P6 that mask selects; the others keep their values. Byte selects
// (.B1-.B3) are refused, as P2R's.
func decodeR2P(d *dinst, in sass.Inst) error {
	a := in.Args
	if len(a) != 3 || a[0].Kind != sass.KPredFile || a[1].Kind != sass.KReg || a[2].Kind != sass.KImm {
		return bad("R2P: operands")
	}
	if len(in.Mods) != 0 {
		return bad("R2P.%v: byte selects not modelled", in.Mods)
	}
	m := uint32(a[2].Imm)
	if m&^0x7f != 0 {
		return bad("R2P: mask %#x selects bits above P6", m)
	}
	d.op, d.n = xR2P, int(m)
	for p := 0; p < 7; p++ {
		if m>>p&1 != 0 {
			d.writes = append(d.writes, span{1, uint8(p), 1})
		}
	}
	return nil
}

// decodeSGXT decodes SGXT(.W)(.U32) Rd, Ra, width: Ra's low width bits,
// zero- (.U32) or sign-extended; width clamps at 32, or wraps mod 32 with
// .W; width 0 gives 0 (PTX szext, which ptxas compiles to SGXT).
func decodeSGXT(d *dinst, in sass.Inst) error {
	a := in.Args
	if len(a) != 3 || a[0].Kind != sass.KReg || a[1].Kind != sass.KReg || a[2].Kind != sass.KImm {
		return bad("SGXT: operands")
	}
	d.op, d.signed = xSGXT, !has(in.Mods, "U32")
	w := a[2].Imm
	if has(in.Mods, "W") {
		w &= 31
	} else if w > 32 {
		w = 32
	}
	d.n = int(w)
	return nil
}

// p2r, r2p and sgxt execute xP2R, xR2P and xSGXT.
func (c *cta) p2r(w *warp, d *dinst, exec uint32) {
	dr := w.dst(d.d)
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		var v uint32
		for p := 0; p < 7; p++ {
			v |= (w.p[p] >> l & 1) << p
		}
		dr[l] = v & uint32(d.n)
	}
}

func (c *cta) r2p(w *warp, d *dinst, exec uint32) {
	a := w.src(&d.s[0], 0)
	for p := 0; p < 7; p++ {
		if d.n>>p&1 == 0 {
			continue
		}
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				w.p[p] = w.p[p]&^(1<<l) | (a[l]>>p&1)<<l
			}
		}
	}
}

func (c *cta) sgxt(w *warp, d *dinst, exec uint32) {
	a := w.src(&d.s[0], 0)
	dr := w.dst(d.d)
	for l := 0; l < 32; l++ {
		if lanes(exec, l) {
			dr[l] = sgxt32(a[l], d.n, d.signed)
		}
	}
}

// sgxt32 extends the low n bits of x (0 <= n <= 32).
func sgxt32(x uint32, n int, signed bool) uint32 {
	switch {
	case n == 0:
		return 0
	case n >= 32:
		return x
	case signed:
		return uint32(int32(x<<(32-n)) >> (32 - n))
	}
	return x & (1<<n - 1)
}

// halfPair joins HMUL2's two binary16 immediates (H1 printed first) into
// the f16x2 word they encode.
func halfPair(hi, lo sass.Operand) sass.Operand {
	return sass.Operand{Kind: sass.KImm, Imm: int64(uint32(hi.Imm)<<16 | uint32(lo.Imm)&0xffff)}
}

// waitSet is DEPBAR's scoreboard set: each scoreboard of the mask is waited
// for as a control word's wait mask waits.
func (c *cta) waitSet(w *warp, d *dinst, exec uint32) error {
	for i := 0; i < 6; i++ {
		if d.sbset>>i&1 == 0 {
			continue
		}
		if w.sb[i] == 0 {
			if c.l.cfg.StrictScoreboards {
				return c.fault(w, d, firstLane(exec), ErrScoreboard, "DEPBAR waits on SB%d, which no instruction in flight set", i)
			}
			continue
		}
		w.sb[i] = 0
		if int8(i) == w.asyncSB {
			c.retire(w, 0)
		}
	}
	return nil
}

// ldgstsSpan is the part of a predicated LDGSTS a lane copies: with the
// predicate false none of the n bytes (all zero-filled); with .ZFILL the
// source address's low bits below n count the trailing bytes zero-filled
// and the copy starts at the address rounded down to n (ptxas builds src +
// (n-size)&(n-1) for cp.async's source size: z.ptx in the 16-byte
// kernels/mma build, cp.async.ca of 4 and 8 bytes likewise).
func ldgstsSpan(d *dinst, p bool, g uint64, n int) (src uint64, copied int) {
	switch {
	case !d.pred:
		return g, n
	case !p:
		return g, 0
	case d.zfill:
		fill := int(g & uint64(n-1))
		return g &^ uint64(n-1), n - fill
	}
	return g, n
}

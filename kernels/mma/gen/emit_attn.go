package gen

import (
	"fmt"
	"strings"

	"github.com/tcrt-go/tcrt/kernels/mma"
	"github.com/tcrt-go/tcrt/tile"
)

// GenerateAttn returns the PTX of one FlashAttention-2 style kernel (see
// mma.AttnParamNames for its interface). Each warp owns 16 query rows; the Q
// tile stays in shared memory, K and V blocks stream through two
// cp.async stages; S = Q·Kᵀ and O += P·V run on mma.sync.m16n8k16 with f32
// accumulators, the P fragments taken straight from S's registers; the
// softmax is online in base 2 (ex2.approx), with the scale, soft-cap
// (tanh.approx), causal/window masks (bottom-right aligned) applied to S.
func GenerateAttn(c mma.AttnConfig) string {
	e := &emitter{}
	nt := mma.AttnThreads
	bn, d := c.BN(), c.D
	tq, tk, tv, kvStage := attnTiles(c)
	par := map[string]string{}
	names := mma.AttnParamNames
	if c.Paged {
		names = mma.AttnPagedParamNames
	}
	for _, n := range names {
		switch attnParamTypes[n] {
		case "u64":
			x := e.rd()
			e.w("ld.param.u64 %s, [p_%s];", x, n)
			e.w("cvta.to.global.u64 %s, %s;", x, x)
			par[n] = x
		case "f32":
			x := e.f()
			e.w("ld.param.f32 %s, [p_%s];", x, n)
			par[n] = x
		case "s32":
			x := e.r()
			e.w("ld.param.s32 %s, [p_%s];", x, n)
			par[n] = x
		default:
			x := e.r()
			e.w("ld.param.u32 %s, [p_%s];", x, n)
			par[n] = x
		}
	}
	pLSE := e.p()
	{
		raw := e.rd()
		e.w("ld.param.u64 %s, [p_LSE];", raw)
		e.w("setp.ne.u64 %s, %s, 0;", pLSE, raw)
	}
	pWS := e.p() // paged with splits > 1: write the workspace
	if c.Paged {
		e.w("setp.gt.u32 %s, %s, 1;", pWS, par["splits"])
		nws := e.p()
		e.w("not.pred %s, %s;", nws, pWS)
		e.w("and.pred %s, %s, %s;", pLSE, pLSE, nws)
	} else {
		e.w("setp.ne.u32 %s, 0, 0;", pWS)
	}
	tid, lane, warp, qb, h, z, g := e.r(), e.r(), e.r(), e.r(), e.r(), e.r(), e.r()
	e.w("mov.u32 %s, %%tid.x;", tid)
	e.w("and.b32 %s, %s, 31;", lane, tid)
	e.w("shr.u32 %s, %s, 5;", warp, tid)
	e.w("mov.u32 %s, %%ctaid.x;", qb)
	e.w("mov.u32 %s, %%ctaid.y;", h)
	e.w("mov.u32 %s, %%ctaid.z;", z)
	e.w("div.u32 %s, %s, %s;", g, h, par["group"])
	zz, sidx := z, ""
	if c.Paged { // z = b·splits + s
		zz, z, sidx = z, e.r(), e.r()
		e.w("div.u32 %s, %s, %s;", z, zz, par["splits"])
		e.w("rem.u32 %s, %s, %s;", sidx, zz, par["splits"])
		nkr, la := e.r(), e.rd()
		e.w("mad.wide.u32 %s, %s, 4, %s;", la, z, par["lens"])
		e.w("ld.global.u32 %s, [%s];", nkr, la)
		par["nk"] = nkr
	}
	// base pointers of this sequence and head
	elemBase := func(ptr, bs, hs, head string) string {
		off, t, x := e.rd(), e.rd(), e.rd()
		e.w("mul.wide.u32 %s, %s, %s;", off, z, par[bs])
		e.w("mul.wide.u32 %s, %s, %s;", t, head, par[hs])
		e.w("add.u64 %s, %s, %s;", off, off, t)
		e.w("shl.b64 %s, %s, 1;", off, off)
		e.w("add.u64 %s, %s, %s;", x, par[ptr], off)
		return x
	}
	qp := elemBase("Q", "q_bs", "q_hs", h)
	var kp, vp string
	if c.Paged { // page 0: the page term is added per row
		kp, vp = e.rd(), e.rd()
		e.w("mul.wide.u32 %s, %s, %s;", kp, g, par["k_hs"])
		e.w("shl.b64 %s, %s, 1;", kp, kp)
		e.w("add.u64 %s, %s, %s;", kp, kp, par["K"])
		e.w("mul.wide.u32 %s, %s, %s;", vp, g, par["v_hs"])
		e.w("shl.b64 %s, %s, 1;", vp, vp)
		e.w("add.u64 %s, %s, %s;", vp, vp, par["V"])
	} else {
		kp = elemBase("K", "k_bs", "k_hs", g)
		vp = elemBase("V", "v_bs", "v_hs", g)
	}
	op := elemBase("O", "o_bs", "o_hs", h)
	// KV range of the CTA's rows
	nq, nk := par["nq"], par["nk"]
	i0, pos0, posL, lo, hi, kvS, nblk := e.r(), e.r(), e.r(), e.r(), e.r(), e.r(), e.r()
	e.w("shl.b32 %s, %s, %d;", i0, qb, log2(mma.AttnBM))
	e.w("sub.s32 %s, %s, %s;", pos0, nk, nq)
	e.w("add.s32 %s, %s, %d;", posL, i0, mma.AttnBM-1)
	e.w("sub.s32 %s, %s, 1;", lo, nq)
	e.w("min.s32 %s, %s, %s;", posL, posL, lo)
	e.w("add.s32 %s, %s, %s;", posL, posL, pos0)
	e.w("add.s32 %s, %s, %s;", pos0, pos0, i0)
	{
		p, t := e.p(), e.r()
		e.w("sub.s32 %s, %s, %s;", t, pos0, par["wl"])
		e.w("max.s32 %s, %s, 0;", t, t)
		e.w("setp.ge.s32 %s, %s, 0;", p, par["wl"])
		e.w("selp.b32 %s, %s, 0, %s;", lo, t, p)
		e.w("add.s32 %s, %s, %s;", t, posL, par["wr"])
		e.w("add.s32 %s, %s, 1;", t, t)
		e.w("min.s32 %s, %s, %s;", t, t, nk)
		e.w("setp.ge.s32 %s, %s, 0;", p, par["wr"])
		e.w("selp.b32 %s, %s, %s, %s;", hi, t, nk, p)
		if c.Paged { // the split's key range
			e.w("mul.lo.u32 %s, %s, %s;", t, sidx, par["chunk"])
			e.w("max.s32 %s, %s, %s;", lo, lo, t)
			e.w("add.u32 %s, %s, %s;", t, t, par["chunk"])
			e.w("min.s32 %s, %s, %s;", hi, hi, t)
		}
		e.w("div.u32 %s, %s, %d;", kvS, lo, bn)
		e.w("mul.lo.u32 %s, %s, %d;", kvS, kvS, bn)
		e.w("sub.s32 %s, %s, %s;", nblk, hi, kvS)
		e.w("add.s32 %s, %s, %d;", nblk, nblk, bn-1)
		e.w("max.s32 %s, %s, 0;", nblk, nblk)
		e.w("div.s32 %s, %s, %d;", nblk, nblk, bn)
	}
	sm := e.r()
	e.w("mov.u32 %s, smem;", sm)

	// copy setup: per copy a row register, a destination register (by the
	// row's low bits) and an immediate
	type cp struct {
		row, dst string
		imm      int
	}
	setup := func(tr tileRows) (ch string, cps []cp) {
		r0 := e.r()
		ch = e.r()
		e.w("shr.u32 %s, %s, %d;", r0, tid, log2(tr.l))
		e.w("and.b32 %s, %s, %d;", ch, tid, tr.l-1)
		step := nt / tr.l
		dsts := map[int]string{}
		for i := 0; i < tr.rows*tr.l/nt; i++ {
			s := (i * step) & 7
			if _, ok := dsts[s]; !ok {
				x, t := e.r(), e.r()
				e.w("add.u32 %s, %s, %d;", t, r0, s)
				e.w("and.b32 %s, %s, 7;", t, t)
				e.w("xor.b32 %s, %s, %s;", t, t, ch)
				e.w("mad.lo.u32 %s, %s, %d, %s;", x, r0, tr.l, t)
				e.w("shl.b32 %s, %s, 4;", x, x)
				e.w("add.u32 %s, %s, %s;", x, x, sm)
				dsts[s] = x
			}
			row := e.r()
			e.w("add.u32 %s, %s, %d;", row, r0, i*step)
			cps = append(cps, cp{row: row, dst: dsts[s], imm: i*step*tr.l*16 + tr.off})
		}
		return ch, cps
	}
	// Q copies: rows i0 + row valid below nq
	{
		ch, cps := setup(tq)
		col := e.r()
		e.w("shl.b32 %s, %s, 3;", col, ch)
		for _, x := range cps {
			r, off, src, p, b := e.r(), e.rd(), e.rd(), e.p(), e.r()
			e.w("add.u32 %s, %s, %s;", r, x.row, i0)
			e.w("setp.lt.u32 %s, %s, %s;", p, r, nq)
			e.w("mul.wide.u32 %s, %s, %s;", off, r, par["q_ss"])
			e.w("cvt.u64.u32 %s, %s;", src, col)
			e.w("add.u64 %s, %s, %s;", off, off, src)
			e.w("shl.b64 %s, %s, 1;", off, off)
			e.w("add.u64 %s, %s, %s;", src, qp, off)
			e.w("selp.b64 %s, %s, %s, %s;", src, src, qp, p)
			e.w("selp.u32 %s, 16, 0, %s;", b, p)
			e.w("cp.async.cg.shared.global [%s+%d], [%s], 16, %s;", x.dst, x.imm, src, b)
		}
	}
	// K and V copies: per copy a 64-bit source advancing BN rows a block
	type kvcp struct {
		cp
		src  string
		base string
		col  string
	}
	kvSetup := func(tr tileRows, bp, ss string) ([]kvcp, string) {
		ch, cps := setup(tr)
		col := e.r()
		e.w("shl.b32 %s, %s, 3;", col, ch)
		var out []kvcp
		if c.Paged {
			for _, x := range cps {
				out = append(out, kvcp{cp: x, base: bp, col: col})
			}
			return out, ""
		}
		for _, x := range cps {
			r, off, t, src := e.r(), e.rd(), e.rd(), e.rd()
			e.w("add.u32 %s, %s, %s;", r, x.row, kvS)
			e.w("mul.wide.u32 %s, %s, %s;", off, r, par[ss])
			e.w("cvt.u64.u32 %s, %s;", t, col)
			e.w("add.u64 %s, %s, %s;", off, off, t)
			e.w("shl.b64 %s, %s, 1;", off, off)
			e.w("add.u64 %s, %s, %s;", src, bp, off)
			out = append(out, kvcp{cp: x, src: src, base: bp})
		}
		step := e.rd()
		e.w("mul.wide.u32 %s, %s, %d;", step, par[ss], bn*2)
		return out, step
	}
	kc, kstep := kvSetup(tk, kp, "k_ss")
	vc, vstep := kvSetup(tv, vp, "v_ss")
	kv := e.r()
	e.w("mov.u32 %s, %s;", kv, kvS)
	// issue K and V of the block at kv into the stage at byte offset so
	// when pred; advance the sources
	issue := func(stageOff, pred string) {
		lim := e.r()
		e.w("sub.s32 %s, %s, %s;", lim, nk, kv)
		if c.Paged {
			// per copy: key j = kv + row, page = table[b·bps + j>>pshift],
			// element page·bs + (j & (PageSize-1))·ss + col (+ head, in the base)
			mask, tb := e.r(), e.rd()
			e.w("mov.u32 %s, 1;", mask)
			e.w("shl.b32 %s, %s, %s;", mask, mask, par["pshift"])
			e.w("sub.u32 %s, %s, 1;", mask, mask)
			e.w("mul.wide.u32 %s, %s, %s;", tb, z, par["bps"])
			e.w("shl.b64 %s, %s, 2;", tb, tb)
			e.w("add.u64 %s, %s, %s;", tb, tb, par["table"])
			for i := range kc {
				p, j, pg, in, pa := e.p(), e.r(), e.r(), e.r(), e.rd()
				e.w("setp.lt.s32 %s, %s, %s;", p, kc[i].row, lim)
				e.w("add.u32 %s, %s, %s;", j, kc[i].row, kv)
				e.w("shr.u32 %s, %s, %s;", pg, j, par["pshift"])
				e.w("mad.wide.u32 %s, %s, 4, %s;", pa, pg, tb)
				e.w("mov.u32 %s, 0;", pg)
				e.w("@%s ld.global.u32 %s, [%s];", p, pg, pa)
				e.w("and.b32 %s, %s, %s;", in, j, mask)
				b := e.r()
				e.w("selp.u32 %s, 16, 0, %s;", b, p)
				for _, set := range []struct {
					x      kvcp
					bs, ss string
				}{{kc[i], "k_bs", "k_ss"}, {vc[i], "v_bs", "v_ss"}} {
					off, t, src, dst := e.rd(), e.rd(), e.rd(), e.r()
					e.w("mul.wide.u32 %s, %s, %s;", off, pg, par[set.bs])
					e.w("mul.wide.u32 %s, %s, %s;", t, in, par[set.ss])
					e.w("add.u64 %s, %s, %s;", off, off, t)
					e.w("cvt.u64.u32 %s, %s;", t, set.x.col)
					e.w("add.u64 %s, %s, %s;", off, off, t)
					e.w("shl.b64 %s, %s, 1;", off, off)
					e.w("add.u64 %s, %s, %s;", src, set.x.base, off)
					e.w("selp.b64 %s, %s, %s, %s;", src, src, set.x.base, p)
					e.w("add.u32 %s, %s, %s;", dst, set.x.dst, stageOff)
					e.w("@%s cp.async.cg.shared.global [%s+%d], [%s], 16, %s;", pred, dst, set.x.imm, src, b)
				}
			}
			e.w("add.u32 %s, %s, %d;", kv, kv, bn)
			return
		}
		for _, set := range []struct {
			cps  []kvcp
			step string
		}{{kc, kstep}, {vc, vstep}} {
			for _, x := range set.cps {
				p, b, src, dst := e.p(), e.r(), e.rd(), e.r()
				e.w("setp.lt.s32 %s, %s, %s;", p, x.row, lim)
				e.w("selp.u32 %s, 16, 0, %s;", b, p)
				e.w("selp.b64 %s, %s, %s, %s;", src, x.src, x.base, p)
				e.w("add.u32 %s, %s, %s;", dst, x.dst, stageOff)
				e.w("@%s cp.async.cg.shared.global [%s+%d], [%s], 16, %s;", pred, dst, x.imm, src, b)
				e.w("add.u64 %s, %s, %s;", x.src, x.src, set.step)
			}
		}
		e.w("add.u32 %s, %s, %d;", kv, kv, bn)
	}
	{
		p, z0 := e.p(), e.r()
		e.w("setp.gt.s32 %s, %s, 0;", p, nblk)
		e.w("mov.u32 %s, 0;", z0)
		issue(z0, p)
		e.w("cp.async.commit_group;")
	}

	// ldmatrix lane registers: per tile, x % 4 -> register
	l7, h3, h4 := e.r(), e.r(), e.r()
	e.w("and.b32 %s, %s, 7;", l7, lane)
	e.w("bfe.u32 %s, %s, 3, 1;", h3, lane)
	e.w("shr.u32 %s, %s, 4;", h4, lane)
	lregs := func(tr tileRows, kind byte) [4]string {
		row, ch := e.r(), e.r()
		switch kind {
		case 'q':
			e.w("and.b32 %s, %s, 15;", row, lane)
			e.w("mad.lo.u32 %s, %s, 16, %s;", row, warp, row)
			e.w("mov.u32 %s, %s;", ch, h4)
		case 'k':
			e.w("mad.lo.u32 %s, %s, 8, %s;", row, h4, l7)
			e.w("mov.u32 %s, %s;", ch, h3)
		default:
			e.w("mad.lo.u32 %s, %s, 8, %s;", row, h3, l7)
			e.w("mov.u32 %s, %s;", ch, h4)
		}
		var out [4]string
		for x := range out {
			v := e.r()
			e.w("add.u32 %s, %s, %d;", v, ch, 2*x)
			e.w("xor.b32 %s, %s, %s;", v, v, l7)
			e.w("shl.b32 %s, %s, 4;", v, v)
			e.w("mad.lo.u32 %s, %s, %d, %s;", v, row, tr.l*16, v)
			e.w("add.u32 %s, %s, %s;", v, v, sm)
			out[x] = v
		}
		return out
	}
	lq, lk, lv := lregs(tq, 'q'), lregs(tk, 'k'), lregs(tv, 'v')

	// per-row state: rows g and g+8 of the warp's 16
	gq, t4 := e.r(), e.r()
	e.w("shr.u32 %s, %s, 2;", gq, lane)
	e.w("and.b32 %s, %s, 3;", t4, lane)
	var rowI, rowLo, rowHi [2]string
	for r := 0; r < 2; r++ {
		rowI[r], rowLo[r], rowHi[r] = e.r(), e.r(), e.r()
		pos, t, p := e.r(), e.r(), e.p()
		e.w("mad.lo.u32 %s, %s, 16, %s;", rowI[r], warp, gq)
		e.w("add.u32 %s, %s, %d;", rowI[r], rowI[r], i0Const(r))
		e.w("add.u32 %s, %s, %s;", rowI[r], rowI[r], i0)
		e.w("add.s32 %s, %s, %s;", pos, rowI[r], nk)
		e.w("sub.s32 %s, %s, %s;", pos, pos, nq)
		e.w("sub.s32 %s, %s, %s;", t, pos, par["wl"])
		e.w("max.s32 %s, %s, 0;", t, t)
		e.w("setp.ge.s32 %s, %s, 0;", p, par["wl"])
		e.w("selp.b32 %s, %s, 0, %s;", rowLo[r], t, p)
		e.w("add.s32 %s, %s, %s;", t, pos, par["wr"])
		e.w("add.s32 %s, %s, 1;", t, t)
		e.w("min.s32 %s, %s, %s;", t, t, nk)
		e.w("setp.ge.s32 %s, %s, 0;", p, par["wr"])
		e.w("selp.b32 %s, %s, %s, %s;", rowHi[r], t, nk, p)
	}
	var mrow, lrow [2]string
	for r := 0; r < 2; r++ {
		mrow[r], lrow[r] = e.f(), e.f()
		e.w("mov.f32 %s, 0fFF800000;", mrow[r])
		e.w("mov.f32 %s, 0f00000000;", lrow[r])
	}
	no := d / 8
	oacc := make([][4]string, no)
	for n := range oacc {
		for k := range oacc[n] {
			oacc[n][k] = e.f()
			e.w("mov.f32 %s, 0f00000000;", oacc[n][k])
		}
	}
	pCap := e.p()
	e.w("setp.gt.f32 %s, %s, 0f00000000;", pCap, par["softcap"])
	scale2, capInv := e.f(), e.f()
	e.w("mul.f32 %s, %s, 0f3FB8AA3B;", scale2, par["scale"]) // scale·log2(e)
	e.w("rcp.approx.f32 %s, %s;", capInv, par["softcap"])
	capL2 := e.f()
	e.w("mul.f32 %s, %s, 0f3FB8AA3B;", capL2, par["softcap"])

	blk := e.r()
	e.w("mov.u32 %s, 0;", blk)
	lLoop, lEpi := e.lbl("aloop"), e.lbl("aepi")
	{
		p := e.p()
		e.w("setp.le.s32 %s, %s, 0;", p, nblk)
		e.w("@%s bra %s;", p, lEpi)
	}
	e.label(lLoop)
	e.w("cp.async.wait_group 0;")
	e.w("bar.sync 0;")
	kv0 := e.r() // first key of this block
	e.w("mad.lo.u32 %s, %s, %d, %s;", kv0, blk, bn, kvS)
	{
		p, nx, so := e.p(), e.r(), e.r()
		e.w("add.u32 %s, %s, 1;", nx, blk)
		e.w("setp.lt.s32 %s, %s, %s;", p, nx, nblk)
		e.w("and.b32 %s, %s, 1;", so, nx)
		e.w("mul.lo.u32 %s, %s, %d;", so, so, kvStage)
		issue(so, p)
		e.w("cp.async.commit_group;")
	}
	cur := e.r()
	e.w("and.b32 %s, %s, 1;", cur, blk)
	e.w("mul.lo.u32 %s, %s, %d;", cur, cur, kvStage)
	ns := bn / 8
	sacc := make([][4]string, ns)
	for n := range sacc {
		for k := range sacc[n] {
			sacc[n][k] = e.f()
			e.w("mov.f32 %s, 0f00000000;", sacc[n][k])
		}
	}
	ldsm := func(regs [4]string, x, imm int, stage string, trans bool) [4]string {
		var out [4]string
		for k := range out {
			out[k] = e.r()
		}
		a := regs[x%4]
		if stage != "" {
			a = e.r()
			e.w("add.u32 %s, %s, %s;", a, regs[x%4], stage)
		}
		tr := ""
		if trans {
			tr = ".trans"
		}
		e.w("ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s+%d];", tr, out[0], out[1], out[2], out[3], a, imm)
		return out
	}
	in := c.In.String()
	mmaOp := func(dd [4]string, a [4]string, b0, b1 string) {
		e.w("mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%s, %s, %s, %s}, {%s, %s, %s, %s}, {%s, %s}, {%s, %s, %s, %s};",
			in, in, dd[0], dd[1], dd[2], dd[3], a[0], a[1], a[2], a[3], b0, b1, dd[0], dd[1], dd[2], dd[3])
	}
	// S = Q·Kᵀ
	for kk := 0; kk < d/16; kk++ {
		qa := ldsm(lq, kk, (kk/4)*128+tq.off, "", false)
		for y := 0; y < bn/16; y++ {
			kb := ldsm(lk, kk, (kk/4)*128+y*16*tk.l*16+tk.off, cur, false)
			mmaOp(sacc[2*y], qa, kb[0], kb[1])
			mmaOp(sacc[2*y+1], qa, kb[2], kb[3])
		}
	}
	// scale, soft-cap, mask (in base-2 units)
	var rmax [2]string
	for r := 0; r < 2; r++ {
		rmax[r] = e.f()
		e.w("mov.f32 %s, 0fFF800000;", rmax[r])
	}
	colBase := e.r()
	e.w("mad.lo.u32 %s, %s, 2, %s;", colBase, t4, kv0)
	for n := 0; n < ns; n++ {
		for k := 0; k < 4; k++ {
			r := k / 2
			s := sacc[n][k]
			j, t, pv, p2 := e.r(), e.f(), e.p(), e.p()
			e.w("add.u32 %s, %s, %d;", j, colBase, 8*n+k%2)
			// capped: cap·log2e·tanh(s·scale/cap); else s·scale·log2e
			e.w("mul.f32 %s, %s, %s;", t, s, par["scale"])
			e.w("mul.f32 %s, %s, %s;", t, t, capInv)
			e.w("tanh.approx.f32 %s, %s;", t, t)
			e.w("mul.f32 %s, %s, %s;", t, t, capL2)
			e.w("mul.f32 %s, %s, %s;", s, s, scale2)
			e.w("selp.f32 %s, %s, %s, %s;", s, t, s, pCap)
			e.w("setp.ge.s32 %s, %s, %s;", pv, j, rowLo[r])
			e.w("setp.lt.s32 %s, %s, %s;", p2, j, rowHi[r])
			e.w("and.pred %s, %s, %s;", pv, pv, p2)
			e.w("selp.f32 %s, %s, 0fFF800000, %s;", s, s, pv)
			e.w("max.f32 %s, %s, %s;", rmax[r], rmax[r], s)
		}
	}
	var alpha, muse [2]string
	for r := 0; r < 2; r++ {
		for _, sh := range []int{1, 2} {
			t := e.f()
			e.w("shfl.sync.bfly.b32 %s, %s, %d, 31, 0xffffffff;", t, rmax[r], sh)
			e.w("max.f32 %s, %s, %s;", rmax[r], rmax[r], t)
		}
		mn, p := e.f(), e.p()
		alpha[r], muse[r] = e.f(), e.f()
		e.w("max.f32 %s, %s, %s;", mn, mrow[r], rmax[r])
		e.w("setp.eq.f32 %s, %s, 0fFF800000;", p, mn)
		e.w("selp.f32 %s, 0f00000000, %s, %s;", muse[r], mn, p)
		e.w("sub.f32 %s, %s, %s;", alpha[r], mrow[r], muse[r])
		e.w("ex2.approx.ftz.f32 %s, %s;", alpha[r], alpha[r])
		e.w("mov.f32 %s, %s;", mrow[r], mn)
		e.w("mul.f32 %s, %s, %s;", lrow[r], lrow[r], alpha[r])
	}
	for n := 0; n < ns; n++ {
		for k := 0; k < 4; k++ {
			r := k / 2
			s := sacc[n][k]
			e.w("sub.f32 %s, %s, %s;", s, s, muse[r])
			e.w("ex2.approx.ftz.f32 %s, %s;", s, s)
			e.w("add.f32 %s, %s, %s;", lrow[r], lrow[r], s)
		}
	}
	for n := range oacc {
		for k := 0; k < 4; k++ {
			e.w("mul.f32 %s, %s, %s;", oacc[n][k], oacc[n][k], alpha[k/2])
		}
	}
	// O += P·V
	for y := 0; y < bn/16; y++ {
		var pa [4]string
		for k, src := range [4][2]string{{sacc[2*y][1], sacc[2*y][0]}, {sacc[2*y][3], sacc[2*y][2]}, {sacc[2*y+1][1], sacc[2*y+1][0]}, {sacc[2*y+1][3], sacc[2*y+1][2]}} {
			pa[k] = e.r()
			e.w("cvt.rn.%sx2.f32 %s, %s, %s;", in, pa[k], src[0], src[1])
		}
		for x := 0; x < d/16; x++ {
			vb := ldsm(lv, x, (x/4)*128+y*16*tv.l*16+tv.off, cur, true)
			mmaOp(oacc[2*x], pa, vb[0], vb[1])
			mmaOp(oacc[2*x+1], pa, vb[2], vb[3])
		}
	}
	e.w("add.u32 %s, %s, 1;", blk, blk)
	{
		p := e.p()
		e.w("setp.lt.s32 %s, %s, %s;", p, blk, nblk)
		e.w("@%s bra %s;", p, lLoop)
	}
	e.label(lEpi)
	e.w("cp.async.wait_group 0;")
	// epilogue: O / l, LSE
	for r := 0; r < 2; r++ {
		for _, sh := range []int{1, 2} {
			t := e.f()
			e.w("shfl.sync.bfly.b32 %s, %s, %d, 31, 0xffffffff;", t, lrow[r], sh)
			e.w("add.f32 %s, %s, %s;", lrow[r], lrow[r], t)
		}
		inv, p, pr, skip := e.f(), e.p(), e.p(), e.lbl("arow")
		// l > 0 or NaN (a NaN or +Inf logit): a NaN row stays NaN, as
		// PyTorch's scaled_dot_product_attention gives; 0 is a row that
		// sees no key
		e.w("setp.gtu.f32 %s, %s, 0f00000000;", p, lrow[r])
		e.w("rcp.rn.f32 %s, %s;", inv, lrow[r])
		e.w("selp.f32 %s, %s, 0f00000000, %s;", inv, inv, p)
		e.w("setp.ge.u32 %s, %s, %s;", pr, rowI[r], nq)
		e.w("@%s bra %s;", pr, skip)
		if c.Paged { // splits > 1: normalised f32 partials and natural LSE
			lNo := e.lbl("nows")
			e.w("@!%s bra %s;", pWS, lNo)
			ri, wa := e.r(), e.rd()
			e.w("mad.lo.u32 %s, %s, %s, %s;", ri, zz, par["heads"], h)
			e.w("mad.lo.u32 %s, %s, %s, %s;", ri, ri, nq, rowI[r])
			e.w("mul.wide.u32 %s, %s, %d;", wa, ri, d*4)
			e.w("add.u64 %s, %s, %s;", wa, wa, par["wsO"])
			e.w("mad.wide.u32 %s, %s, 8, %s;", wa, t4, wa)
			for n := 0; n < no; n++ {
				a, b := e.f(), e.f()
				e.w("mul.f32 %s, %s, %s;", a, oacc[n][2*r], inv)
				e.w("mul.f32 %s, %s, %s;", b, oacc[n][2*r+1], inv)
				e.w("st.global.v2.f32 [%s+%d], {%s, %s};", wa, 32*n, a, b)
			}
			pl, lse, t, la := e.p(), e.f(), e.f(), e.rd()
			e.w("setp.eq.u32 %s, %s, 0;", pl, t4)
			e.w("@!%s bra %s;", pl, skip)
			e.w("lg2.approx.f32 %s, %s;", t, lrow[r])
			e.w("add.f32 %s, %s, %s;", lse, mrow[r], t)
			e.w("mul.f32 %s, %s, 0f3F317218;", lse, lse)
			e.w("selp.f32 %s, %s, 0fFF800000, %s;", lse, lse, p)
			e.w("mad.wide.u32 %s, %s, 4, %s;", la, ri, par["wsL"])
			e.w("st.global.f32 [%s], %s;", la, lse)
			e.w("bra %s;", skip)
			e.label(lNo)
		}
		ro := e.rd()
		e.w("mul.wide.u32 %s, %s, %s;", ro, rowI[r], par["o_ss"])
		cb := e.rd()
		e.w("mad.wide.u32 %s, %s, 2, %s;", cb, t4, ro)
		for n := 0; n < no; n++ {
			a, b, pk, addr := e.f(), e.f(), e.r(), e.rd()
			e.w("mul.f32 %s, %s, %s;", a, oacc[n][2*r], inv)
			e.w("mul.f32 %s, %s, %s;", b, oacc[n][2*r+1], inv)
			e.w("cvt.rn.%sx2.f32 %s, %s, %s;", in, pk, b, a)
			e.w("add.u64 %s, %s, %d;", addr, cb, 8*n)
			e.w("shl.b64 %s, %s, 1;", addr, addr)
			e.w("add.u64 %s, %s, %s;", addr, addr, op)
			e.w("st.global.b32 [%s], %s;", addr, pk)
		}
		{ // LSE by the quad's first lane
			pl, lse, t, la, lo := e.p(), e.f(), e.f(), e.rd(), e.rd()
			e.w("setp.eq.and.u32 %s, %s, 0, %s;", pl, t4, pLSE)
			e.w("@!%s bra %s;", pl, skip)
			e.w("lg2.approx.f32 %s, %s;", t, lrow[r])
			e.w("add.f32 %s, %s, %s;", lse, mrow[r], t)
			e.w("mul.f32 %s, %s, 0f3F317218;", lse, lse) // ln 2
			e.w("selp.f32 %s, %s, 0fFF800000, %s;", lse, lse, p)
			e.w("mul.wide.u32 %s, %s, %s;", lo, z, par["lse_bs"])
			e.w("mul.wide.u32 %s, %s, %s;", la, h, par["lse_hs"])
			e.w("add.u64 %s, %s, %s;", lo, lo, la)
			e.w("cvt.u64.u32 %s, %s;", la, rowI[r])
			e.w("add.u64 %s, %s, %s;", lo, lo, la)
			e.w("shl.b64 %s, %s, 2;", lo, lo)
			e.w("add.u64 %s, %s, %s;", lo, lo, par["LSE"])
			e.w("st.global.f32 [%s], %s;", lo, lse)
		}
		e.label(skip)
	}
	e.w("ret;")

	var sb strings.Builder
	fmt.Fprintf(&sb, ".visible .entry %s(\n", c.Name())
	for i, n := range names {
		t := attnParamTypes[n]
		if t == "" {
			t = "u32"
		}
		sep := ","
		if i == len(names)-1 {
			sep = ""
		}
		fmt.Fprintf(&sb, "\t.param .%s p_%s%s\n", t, n, sep)
	}
	// .minnctapersm 1: without it ptxas 11.8 caps the sm_90 paged D=128
	// kernel at 168 registers for more CTAs an SM, and spills
	fmt.Fprintf(&sb, ")\n.maxntid %d, 1, 1\n.minnctapersm 1\n{\n", nt)
	fmt.Fprintf(&sb, "\t.reg .pred %%p<%d>;\n\t.reg .b16 %%h<%d>;\n\t.reg .b32 %%r<%d>;\n\t.reg .b64 %%rd<%d>;\n\t.reg .f32 %%f<%d>;\n",
		max(e.np, 1), max(e.nh, 1), max(e.nr, 1), max(e.nd, 1), max(e.nf, 1))
	sb.WriteString(e.body.String())
	sb.WriteString("}\n")
	return sb.String()
}

// i0Const is the row offset of accumulator half r (rows g and g+8).
func i0Const(r int) int { return 8 * r }

// GenerateCombine returns the split-KV combine kernel for head dimension d
// (mma.CombineParamNames; D threads, CTA (i, h, b)): O = Σ_s w_s·O_s / Σ_s w_s
// with w_s = exp(LSE_s − max LSE), LSE = max + log Σ w_s; a row no split
// saw outputs zeros and −Inf.
func GenerateCombine(d int, in tile.DType) string {
	e := &emitter{}
	par := map[string]string{}
	for _, n := range mma.CombineParamNames {
		if n == "wsO" || n == "wsL" || n == "O" || n == "LSE" {
			x := e.rd()
			e.w("ld.param.u64 %s, [p_%s];", x, n)
			par[n+"raw"] = x
			y := e.rd()
			e.w("cvta.to.global.u64 %s, %s;", y, x)
			par[n] = y
			continue
		}
		x := e.r()
		e.w("ld.param.u32 %s, [p_%s];", x, n)
		par[n] = x
	}
	i, h, b, t := e.r(), e.r(), e.r(), e.r()
	e.w("mov.u32 %s, %%ctaid.x;", i)
	e.w("mov.u32 %s, %%ctaid.y;", h)
	e.w("mov.u32 %s, %%ctaid.z;", b)
	e.w("mov.u32 %s, %%tid.x;", t)
	// row index of split 0: ((b·S)·heads + h)·nq + i; split step heads·nq
	r0, step := e.r(), e.r()
	e.w("mul.lo.u32 %s, %s, %s;", r0, b, par["splits"])
	e.w("mad.lo.u32 %s, %s, %s, %s;", r0, r0, par["heads"], h)
	e.w("mad.lo.u32 %s, %s, %s, %s;", r0, r0, par["nq"], i)
	e.w("mul.lo.u32 %s, %s, %s;", step, par["heads"], par["nq"])
	m, sum, acc, s, ri := e.f(), e.f(), e.f(), e.r(), e.r()
	e.w("mov.f32 %s, 0fFF800000;", m)
	e.w("mov.u32 %s, 0;", s)
	e.w("mov.u32 %s, %s;", ri, r0)
	l1, l2 := e.lbl("cmax"), e.lbl("csum")
	e.label(l1)
	{
		a, v, p := e.rd(), e.f(), e.p()
		e.w("mad.wide.u32 %s, %s, 4, %s;", a, ri, par["wsL"])
		e.w("ld.global.f32 %s, [%s];", v, a)
		e.w("max.f32 %s, %s, %s;", m, m, v)
		e.w("add.u32 %s, %s, %s;", ri, ri, step)
		e.w("add.u32 %s, %s, 1;", s, s)
		e.w("setp.lt.u32 %s, %s, %s;", p, s, par["splits"])
		e.w("@%s bra %s;", p, l1)
	}
	mu, pm := e.f(), e.p()
	e.w("setp.eq.f32 %s, %s, 0fFF800000;", pm, m)
	e.w("selp.f32 %s, 0f00000000, %s, %s;", mu, m, pm)
	e.w("mov.f32 %s, 0f00000000;", sum)
	e.w("mov.f32 %s, 0f00000000;", acc)
	e.w("mov.u32 %s, 0;", s)
	e.w("mov.u32 %s, %s;", ri, r0)
	e.label(l2)
	{
		a, v, w, o, p := e.rd(), e.f(), e.f(), e.f(), e.p()
		e.w("mad.wide.u32 %s, %s, 4, %s;", a, ri, par["wsL"])
		e.w("ld.global.f32 %s, [%s];", v, a)
		e.w("sub.f32 %s, %s, %s;", w, v, mu)
		e.w("mul.f32 %s, %s, 0f3FB8AA3B;", w, w)
		e.w("ex2.approx.ftz.f32 %s, %s;", w, w)
		e.w("add.f32 %s, %s, %s;", sum, sum, w)
		e.w("mul.wide.u32 %s, %s, %d;", a, ri, d*4)
		e.w("add.u64 %s, %s, %s;", a, a, par["wsO"])
		e.w("mad.wide.u32 %s, %s, 4, %s;", a, t, a)
		e.w("ld.global.f32 %s, [%s];", o, a)
		e.w("fma.rn.f32 %s, %s, %s, %s;", acc, w, o, acc)
		e.w("add.u32 %s, %s, %s;", ri, ri, step)
		e.w("add.u32 %s, %s, 1;", s, s)
		e.w("setp.lt.u32 %s, %s, %s;", p, s, par["splits"])
		e.w("@%s bra %s;", p, l2)
	}
	ps, inv, res, hh := e.p(), e.f(), e.f(), e.h()
	e.w("setp.gtu.f32 %s, %s, 0f00000000;", ps, sum) // NaN stays NaN
	e.w("rcp.rn.f32 %s, %s;", inv, sum)
	e.w("selp.f32 %s, %s, 0f00000000, %s;", inv, inv, ps)
	e.w("mul.f32 %s, %s, %s;", res, acc, inv)
	e.w("cvt.rn.%s.f32 %s, %s;", in, hh, res)
	oa, t2 := e.rd(), e.rd()
	e.w("mul.wide.u32 %s, %s, %s;", oa, b, par["o_bs"])
	e.w("mul.wide.u32 %s, %s, %s;", t2, i, par["o_ss"])
	e.w("add.u64 %s, %s, %s;", oa, oa, t2)
	e.w("mul.wide.u32 %s, %s, %s;", t2, h, par["o_hs"])
	e.w("add.u64 %s, %s, %s;", oa, oa, t2)
	e.w("cvt.u64.u32 %s, %s;", t2, t)
	e.w("add.u64 %s, %s, %s;", oa, oa, t2)
	e.w("shl.b64 %s, %s, 1;", oa, oa)
	e.w("add.u64 %s, %s, %s;", oa, oa, par["O"])
	e.w("st.global.b16 [%s], %s;", oa, hh)
	{
		p, q, lse, lg, la, t3 := e.p(), e.p(), e.f(), e.f(), e.rd(), e.rd()
		e.w("setp.ne.u64 %s, %s, 0;", p, par["LSEraw"])
		e.w("setp.eq.and.u32 %s, %s, 0, %s;", q, t, p)
		lEnd := e.lbl("cend")
		e.w("@!%s bra %s;", q, lEnd)
		e.w("lg2.approx.f32 %s, %s;", lg, sum)
		e.w("mul.f32 %s, %s, 0f3F317218;", lg, lg)
		e.w("add.f32 %s, %s, %s;", lse, m, lg)
		e.w("selp.f32 %s, %s, 0fFF800000, %s;", lse, lse, ps)
		e.w("mul.wide.u32 %s, %s, %s;", la, b, par["lse_bs"])
		e.w("mul.wide.u32 %s, %s, %s;", t3, h, par["lse_hs"])
		e.w("add.u64 %s, %s, %s;", la, la, t3)
		e.w("cvt.u64.u32 %s, %s;", t3, i)
		e.w("add.u64 %s, %s, %s;", la, la, t3)
		e.w("shl.b64 %s, %s, 2;", la, la)
		e.w("add.u64 %s, %s, %s;", la, la, par["LSE"])
		e.w("st.global.f32 [%s], %s;", la, lse)
		e.label(lEnd)
	}
	e.w("ret;")
	var sb strings.Builder
	fmt.Fprintf(&sb, ".visible .entry %s(\n", mma.CombineName(d, in))
	for k, n := range mma.CombineParamNames {
		t := "u32"
		if n == "wsO" || n == "wsL" || n == "O" || n == "LSE" {
			t = "u64"
		}
		sep := ","
		if k == len(mma.CombineParamNames)-1 {
			sep = ""
		}
		fmt.Fprintf(&sb, "\t.param .%s p_%s%s\n", t, n, sep)
	}
	fmt.Fprintf(&sb, ")\n.maxntid %d, 1, 1\n{\n", d)
	fmt.Fprintf(&sb, "\t.reg .pred %%p<%d>;\n\t.reg .b16 %%h<%d>;\n\t.reg .b32 %%r<%d>;\n\t.reg .b64 %%rd<%d>;\n\t.reg .f32 %%f<%d>;\n",
		max(e.np, 1), max(e.nh, 1), max(e.nr, 1), max(e.nd, 1), max(e.nf, 1))
	sb.WriteString(e.body.String())
	sb.WriteString("}\n")
	return sb.String()
}

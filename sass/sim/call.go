package sim

import "github.com/tcrt-go/tcrt/sass"

// decCallReg decodes CALL.REL.NOINC Ra off, a call through a function
// pointer: like RET.REL.NODEC Ra off, each lane goes to the byte offset
// Ra + (next instruction + off) of the kernel's code -- nvdisasm prints
// next + off, and ptxas sets off to minus the next instruction, so the
// target is Ra, an offset in the kernel's own section. ptxas loads Ra
// from the kernel's constant bank 2 (.nv.constant2.<kernel>), where it
// writes each address-taken function's offset in the caller's section
// (tail_misc.ptx misc: 0x3e0 and 0x3c0 for $misc$twice and
// $misc$thrice, with no relocation against the bank, the functions being
// copied into the caller's section); the launch binds that bank as it
// is. Lanes with different targets diverge and run in turn; the call
// counts one level of call depth, as the direct CALL.
func (c *decoder) decCallReg() error {
	d := c.d
	if c.a[0].Kind != sass.KReg || c.a[1].Kind != sass.KTarget && c.a[1].Kind != sass.KImm {
		return bad("CALL: operands %v, %v", c.a[0].Kind, c.a[1].Kind)
	}
	if err := c.src(c.a[0], 0, 1); err != nil {
		return err
	}
	d.op, d.n, d.call = xBRX, 16*(d.idx+1)+int(c.a[1].Imm), 1
	return nil
}

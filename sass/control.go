package sass

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Scoreboard names one of the six dependency scoreboards SB0..SB5 a
// variable-latency instruction may set; the zero value NoSB is none.
// The encoding holds the scoreboard number, 7 for none; the value SB6 (6)
// is representable in the 3-bit field and accepted by nvdisasm, so it is
// kept for round trips, but no hardware use of it is known.
type Scoreboard uint8

// Scoreboards. A Scoreboard holds the number plus one.
const (
	NoSB Scoreboard = iota
	SB0
	SB1
	SB2
	SB3
	SB4
	SB5
	SB6
)

// Index returns the scoreboard number 0..6, or -1 for NoSB.
func (s Scoreboard) Index() int { return int(s) - 1 }

// Control is the scheduling part of every instruction word (bits 105..127):
//
//	bits 105..108 stall cycles (0..15)
//	bit  109      yield: 0 lets the warp scheduler switch warps (Yield true)
//	bits 110..112 write scoreboard (7 none)
//	bits 113..115 read scoreboard (7 none)
//	bits 116..121 wait mask over scoreboards 0..5
//	bits 122..125 operand reuse flags for operand slots A, B, C (and a fourth
//	              bit, kept but not printed)
//	bits 126..127 unused by the tools (nvdisasm accepts any value); kept.
//
// The zero value is: no stall, no yield, no scoreboards, no waits, no reuse.
type Control struct {
	Stall   uint8      // 0..15 cycles before the next instruction issues
	Yield   bool       // yield hint (bit 109 clear)
	WriteSB Scoreboard // scoreboard released when the results are written
	ReadSB  Scoreboard // scoreboard released when the sources have been read
	Wait    uint8      // mask of scoreboards (bit i = SBi) to wait on before issue
	Reuse   uint8      // operand reuse cache flags: bit 0 A, 1 B, 2 C, 3 the fourth
	Extra   uint8      // bits 126..127, unused
}

// ErrControl reports a control word field out of range.
var ErrControl = fmt.Errorf("%w: control field out of range", ErrInvalid)

func (c Control) check() error {
	switch {
	case c.Stall > 15:
		return fmt.Errorf("%w: stall %d", ErrControl, c.Stall)
	case c.WriteSB > SB6 || c.ReadSB > SB6:
		return fmt.Errorf("%w: scoreboard", ErrControl)
	case c.Wait > 63:
		return fmt.Errorf("%w: wait mask %#x", ErrControl, c.Wait)
	case c.Reuse > 15:
		return fmt.Errorf("%w: reuse %#x", ErrControl, c.Reuse)
	case c.Extra > 3:
		return fmt.Errorf("%w: extra bits %#x", ErrControl, c.Extra)
	}
	return nil
}

func sbField(s Scoreboard) uint64 {
	if s == NoSB {
		return 7
	}
	return uint64(s - 1)
}

func sbFrom(v uint64) Scoreboard {
	if v == 7 {
		return NoSB
	}
	return Scoreboard(v + 1)
}

// bits returns the 23-bit control field (word bits 105..127).
func (c Control) bits() uint64 {
	v := uint64(c.Stall & 15)
	if !c.Yield {
		v |= 1 << 4
	}
	v |= sbField(c.WriteSB) << 5
	v |= sbField(c.ReadSB) << 8
	v |= uint64(c.Wait&63) << 11
	v |= uint64(c.Reuse&15) << 17
	v |= uint64(c.Extra&3) << 21
	return v
}

func controlFrom(v uint64) Control {
	return Control{
		Stall:   uint8(v & 15),
		Yield:   v>>4&1 == 0,
		WriteSB: sbFrom(v >> 5 & 7),
		ReadSB:  sbFrom(v >> 8 & 7),
		Wait:    uint8(v >> 11 & 63),
		Reuse:   uint8(v >> 17 & 15),
		Extra:   uint8(v >> 21 & 3),
	}
}

// String renders the control word in the listing form the parser reads:
//
//	[B------:R-:W-:Y:S04]
//
// B: the wait mask, one column per scoreboard 0..5 ('-' or its digit);
// R: the read scoreboard; W: the write scoreboard; Y (yield) or '-';
// S: the stall count. Reuse flags follow as ":U<mask>" (bit 0 A, 1 B,
// 2 C, 3 the fourth) and the unused bits 126..127 as ":X<n>", when set.
// Inst.Listing shows the reuse flags of register operands as ".reuse" on
// them instead, and only the others here.
func (c Control) String() string { return c.format(c.Reuse) }

func (c Control) format(reuse uint8) string {
	var b strings.Builder
	b.WriteString("[B")
	for i := 0; i < 6; i++ {
		if c.Wait>>i&1 != 0 {
			b.WriteByte(byte('0' + i))
		} else {
			b.WriteByte('-')
		}
	}
	sb := func(s Scoreboard) string {
		if s == NoSB {
			return "-"
		}
		return strconv.Itoa(s.Index())
	}
	b.WriteString(":R" + sb(c.ReadSB) + ":W" + sb(c.WriteSB) + ":")
	if c.Yield {
		b.WriteByte('Y')
	} else {
		b.WriteByte('-')
	}
	fmt.Fprintf(&b, ":S%02d", c.Stall)
	if reuse != 0 {
		fmt.Fprintf(&b, ":U%d", reuse)
	}
	if c.Extra != 0 {
		fmt.Fprintf(&b, ":X%d", c.Extra)
	}
	b.WriteByte(']')
	return b.String()
}

// ParseControl reads the form Control.String writes.
func ParseControl(s string) (Control, error) {
	var c Control
	bad := func() (Control, error) { return Control{}, fmt.Errorf("%w: control %q", ErrSyntax, s) }
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return bad()
	}
	parts := strings.Split(s[1:len(s)-1], ":")
	if len(parts) < 5 {
		return bad()
	}
	w := parts[0]
	if len(w) != 7 || w[0] != 'B' {
		return bad()
	}
	for i := 0; i < 6; i++ {
		switch w[1+i] {
		case '-':
		case byte('0' + i):
			c.Wait |= 1 << i
		default:
			return bad()
		}
	}
	sb := func(p string, tag byte) (Scoreboard, bool) {
		if len(p) != 2 || p[0] != tag {
			return 0, false
		}
		if p[1] == '-' {
			return NoSB, true
		}
		if p[1] < '0' || p[1] > '6' {
			return 0, false
		}
		return Scoreboard(p[1]-'0') + 1, true
	}
	var ok bool
	if c.ReadSB, ok = sb(parts[1], 'R'); !ok {
		return bad()
	}
	if c.WriteSB, ok = sb(parts[2], 'W'); !ok {
		return bad()
	}
	switch parts[3] {
	case "Y":
		c.Yield = true
	case "-":
	default:
		return bad()
	}
	if len(parts[4]) != 3 || parts[4][0] != 'S' {
		return bad()
	}
	n, err := strconv.Atoi(parts[4][1:])
	if err != nil || n < 0 || n > 15 {
		return bad()
	}
	c.Stall = uint8(n)
	for _, p := range parts[5:] {
		switch {
		case len(p) >= 2 && p[0] == 'U':
			n, err := strconv.Atoi(p[1:])
			if err != nil || n < 1 || n > 15 {
				return bad()
			}
			c.Reuse |= uint8(n)
		case len(p) == 2 && p[0] == 'X' && p[1] >= '1' && p[1] <= '3':
			c.Extra = p[1] - '0'
		default:
			return bad()
		}
	}
	return c, nil
}

// ControlOfWord returns the control field of a 16-byte instruction word
// (bits 105..127), whether or not the instruction decodes; a slice
// shorter than 16 bytes gives the zero Control.
func ControlOfWord(b []byte) Control {
	if len(b) < 16 {
		return Control{}
	}
	return controlFrom(binary.LittleEndian.Uint64(b[8:16]) >> 41)
}

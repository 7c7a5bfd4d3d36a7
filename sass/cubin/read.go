package cubin

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// File is a cubin as Read reads it: the ELF header fields a cubin
// sets, its sections, symbols and program headers in file order, its global
// .nv.info records, and the kernels described by them.
type File struct {
	Arch       int    // SASS architecture, e_flags bits 0-7 (86 for sm_86)
	Flags      uint32 // e_flags
	Version    uint32 // e_version: the toolkit version (118 for CUDA 11.8)
	OSABI      uint8  // e_ident[EI_OSABI]
	ABIVersion uint8  // e_ident[EI_ABIVERSION]
	Type       elf.Type
	Machine    elf.Machine

	Sections []Section // without the null section 0
	Symbols  []Symbol  // with the null symbol 0, so that indices match st_info references
	Segments []Segment

	Info    []InfoRecord // the global .nv.info
	Kernels []KernelInfo // in the order of their EIATTR_REGCOUNT records
}

// Section is one section header and its contents (nil for NOBITS).
type Section struct {
	Name    string
	Type    elf.SectionType
	Flags   elf.SectionFlag
	Offset  uint64
	Size    uint64
	Link    uint32
	Info    uint32
	Align   uint64
	EntSize uint64
	Data    []byte
}

// Symbol is one symbol table entry.
type Symbol struct {
	Name    string
	Info    uint8
	Other   uint8
	Section elf.SectionIndex
	Value   uint64
	Size    uint64
}

// Segment is one program header.
type Segment struct {
	Type   elf.ProgType
	Flags  elf.ProgFlag
	Off    uint64
	Filesz uint64
	Memsz  uint64
	Align  uint64
}

// KernelInfo is one kernel of a cubin: a Kernel description that
// Write turns back into an equivalent cubin, the parameter offsets the
// cubin records, and the records of its .nv.info.<name> section.
type KernelInfo struct {
	// Kernel is the description. Parameter alignments are not in a cubin:
	// each Param.Align is the parameter's natural alignment (its size
	// rounded up to a power of two, at most 16) where that gives the
	// recorded offset, else the largest power of two (at most 256) dividing
	// the offset; either gives the same layout.
	Kernel       Kernel
	ParamOffsets []int
	Info         []InfoRecord
	// Unknown lists the attributes of .nv.info.<name> records that the
	// description does not capture; Write would not write them.
	Unknown []InfoAttr
}

// Section returns the section with the given name, or nil (also for a
// nil File).
func (c *File) Section(name string) *Section {
	if c == nil {
		return nil
	}
	for i := range c.Sections {
		if c.Sections[i].Name == name {
			return &c.Sections[i]
		}
	}
	return nil
}

// SectionName returns the name of the section with ELF index i ("" for 0
// or an index out of range).
func (c *File) SectionName(i int) string {
	if c == nil || i < 1 || i > len(c.Sections) {
		return ""
	}
	return c.Sections[i-1].Name
}

// SymbolName returns the name of symbol i ("" if out of range).
func (c *File) SymbolName(i int) string {
	if c == nil || i < 0 || i >= len(c.Symbols) {
		return ""
	}
	return c.Symbols[i].Name
}

// Read parses a cubin: its ELF structure, its .nv.info sections and
// the kernels they describe. It reads cubins from ptxas as well as from
// Write; what it cannot turn into a Kernel is an error.
func Read(b []byte) (*File, error) {
	f, err := openCubinELF(b)
	if err != nil {
		return nil, fmt.Errorf("%w: Read: %v", ErrFormat, err)
	}
	defer f.Close()
	c := &File{
		Version:    binary.LittleEndian.Uint32(b[20:]),
		Flags:      binary.LittleEndian.Uint32(b[48:]),
		OSABI:      uint8(f.OSABI),
		ABIVersion: f.ABIVersion,
		Type:       f.Type,
		Machine:    f.Machine,
	}
	c.Arch = int(c.Flags & 0xff)
	for i, s := range f.Sections {
		if i == 0 { // the null section (absent from a malformed file)
			continue
		}
		cs := Section{Name: s.Name, Type: s.Type, Flags: s.Flags, Offset: s.Offset, Size: s.Size,
			Link: s.Link, Info: s.Info, Align: s.Addralign, EntSize: s.Entsize}
		if s.Type != elf.SHT_NOBITS {
			if cs.Data, err = s.Data(); err != nil {
				return nil, fmt.Errorf("%w: Read: section %s: %v", ErrFormat, s.Name, err)
			}
		}
		c.Sections = append(c.Sections, cs)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%w: Read: %v", ErrFormat, err)
	}
	c.Symbols = append(c.Symbols, Symbol{})
	for _, s := range syms {
		c.Symbols = append(c.Symbols, Symbol{Name: s.Name, Info: s.Info, Other: s.Other,
			Section: s.Section, Value: s.Value, Size: s.Size})
	}
	for _, p := range f.Progs {
		c.Segments = append(c.Segments, Segment{Type: p.Type, Flags: p.Flags, Off: p.Off,
			Filesz: p.Filesz, Memsz: p.Memsz, Align: p.Align})
	}
	if s := c.Section(".nv.info"); s != nil {
		if c.Info, err = ParseInfo(s.Data); err != nil {
			return nil, err
		}
	}
	for _, r := range c.Info {
		if r.Attr != AttrRegCount || !r.HasSymbol() {
			continue
		}
		k, err := c.readKernel(int(r.Symbol()))
		if err != nil {
			return nil, err
		}
		c.Kernels = append(c.Kernels, k)
	}
	return c, nil
}

// openCubinELF opens a cubin with debug/elf. A cubin's e_version is the
// toolkit version (118), not EV_CURRENT (1), and debug/elf rejects any other
// value, so a copy with e_version 1 is parsed; Read takes the real
// value from the bytes.
func openCubinELF(b []byte) (*elf.File, error) {
	if len(b) < ehdrSize || !bytes.HasPrefix(b, []byte("\x7fELF\x02\x01")) {
		return nil, fmt.Errorf("not a little-endian ELF64 file")
	}
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c[20:], uint32(elf.EV_CURRENT))
	return elf.NewFile(bytes.NewReader(c))
}

// globalValue returns the value of the global .nv.info record a for symbol
// sym, and whether there is one.
func (c *File) globalValue(a InfoAttr, sym int) (uint32, bool) {
	for _, r := range c.Info {
		if r.Attr == a && r.HasSymbol() && int(r.Symbol()) == sym && len(r.Data) == 8 {
			return binary.LittleEndian.Uint32(r.Data[4:]), true
		}
	}
	return 0, false
}

func (c *File) readKernel(sym int) (KernelInfo, error) {
	if sym <= 0 || sym >= len(c.Symbols) {
		return KernelInfo{}, fmt.Errorf("%w: Read: EIATTR_REGCOUNT names symbol %d of %d", ErrFormat, sym, len(c.Symbols))
	}
	s := c.Symbols[sym]
	name := s.Name
	fail := func(format string, a ...any) (KernelInfo, error) {
		return KernelInfo{}, fmt.Errorf("%w: Read: kernel %q: %s", ErrFormat, name, fmt.Sprintf(format, a...))
	}
	if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Other&stoCUDAEnty == 0 {
		return fail("symbol is not a kernel entry (info %#x, other %#x)", s.Info, s.Other)
	}
	text := c.Section(".text." + name)
	if text == nil || c.SectionName(int(s.Section)) != text.Name {
		return fail("no .text section")
	}
	k := Kernel{Name: name, Code: text.Data}
	k.Registers = int(text.Info >> shiRegisterShift)
	if regs, ok := c.globalValue(AttrRegCount, sym); !ok || int(regs) != k.Registers {
		return fail("EIATTR_REGCOUNT %d disagrees with .text sh_info registers %d", regs, k.Registers)
	}
	if int(text.Info&(1<<shiRegisterShift-1)) != sym {
		return fail(".text sh_info names symbol %d, not %d", text.Info&(1<<shiRegisterShift-1), sym)
	}
	k.Barriers = int(uint64(text.Flags) & shfBarrierMask >> shfBarrierShift)
	if frame, ok := c.globalValue(AttrFrameSize, sym); ok {
		k.FrameSize = int(frame)
	}
	if sh := c.Section(".nv.shared." + name); sh != nil {
		k.SharedStatic = int(sh.Size)
		k.SharedAlign = int(sh.Align)
		k.DynamicShared = sh.Size == 0
	}
	ki := KernelInfo{}
	if s := c.Section(".nv.info." + name); s != nil {
		var err error
		if ki.Info, err = ParseInfo(s.Data); err != nil {
			return fail("%v", err)
		}
	}
	var params []KParamInfo
	paramSize := -1
	for _, r := range ki.Info {
		switch r.Attr {
		case AttrKParamInfo:
			p, err := ParseKParamInfo(r)
			if err != nil {
				return fail("%v", err)
			}
			params = append(params, p)
		case AttrCBankParamSize:
			paramSize = int(r.Value)
		case AttrMaxRegCount:
			if r.Value != 0xff {
				k.MaxRegisters = int(r.Value)
			}
		case AttrExitInstrOffsets:
			k.ExitOffsets = ints(r.U32s())
		case AttrCoopGroupInstrOffsets:
			k.CoopOffsets = ints(r.U32s())
		case AttrMaxThreads, AttrReqNTID:
			v := r.U32s()
			if len(v) != 3 {
				return fail("%v record of %d words", r.Attr, len(v))
			}
			t := [3]int{int(v[0]), int(v[1]), int(v[2])}
			if r.Attr == AttrMaxThreads {
				k.MaxThreads = t
			} else {
				k.ReqThreads = t
			}
		case AttrCUDAAPIVersion, AttrSW2861232WAR, AttrParamCBank:
		default:
			ki.Unknown = append(ki.Unknown, r.Attr)
		}
	}
	sort.Slice(params, func(i, j int) bool { return params[i].Ordinal < params[j].Ordinal })
	end := 0
	for i, p := range params {
		if p.Ordinal != i {
			return fail("parameter ordinals are not 0..%d", len(params)-1)
		}
		// The natural alignment (size rounded up to a power of two, at
		// most 16) if it gives this offset, else the largest power of two
		// dividing the offset.
		a := 256
		if p.Offset != 0 {
			a = min(p.Offset&-p.Offset, 256)
		}
		n := 1
		for n < p.Size && n < 16 {
			n *= 2
		}
		if n < a && alignUp(end, n) == p.Offset {
			a = n
		}
		k.Params = append(k.Params, Param{Size: p.Size, Align: a})
		ki.ParamOffsets = append(ki.ParamOffsets, p.Offset)
		end = p.Offset + p.Size
	}
	if len(params) > 0 && paramSize != end {
		return fail("EIATTR_CBANK_PARAM_SIZE %d, parameters end at %d", paramSize, end)
	}
	if c0 := c.Section(".nv.constant0." + name); c0 == nil || c0.Size != uint64(ParamBase+end) {
		return fail(".nv.constant0 is missing or not %#x bytes", ParamBase+end)
	}
	ki.Kernel = k
	return ki, nil
}

func ints(vs []uint32) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = int(v)
	}
	return out
}

// KernelNames returns the names of the cubin's kernels (none for a nil
// File).
func (c *File) KernelNames() []string {
	if c == nil {
		return nil
	}
	var names []string
	for _, k := range c.Kernels {
		names = append(names, k.Kernel.Name)
	}
	return names
}

// String summarises the cubin.
func (c *File) String() string {
	if c == nil {
		return "cubin <nil>"
	}
	return fmt.Sprintf("cubin sm_%d, %d sections, kernels %s", c.Arch, len(c.Sections), strings.Join(c.KernelNames(), ", "))
}

package cubin

// The cubin writer.
//
// A cubin is the ELF file the CUDA driver loads with cuModuleLoadData. The
// layout below was learnt from the outside: PTX kernels assembled with the
// CUDA 11.8 ptxas for sm_86 and sm_89, read back with cuobjdump -elf, readelf
// and debug/elf, one property varied at a time. The tests in cubin_test.go
// compare every cubin this writer produces with the one ptxas writes for the
// same kernel, section by section and .nv.info record by record.
//
// NOT VERIFIED: that the CUDA driver loads and runs a cubin written here.
// That takes an sm_86 or sm_89 GPU, and none was available when the writer
// was written; the tools (cuobjdump, nvdisasm) accept its output and read it
// the same as ptxas's cubin, which is all that has been checked.

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// ParamBase is the byte offset in constant bank 0 at which the first kernel
// parameter lies on sm_75 through sm_89 (ptxas 11.8 writes the parameter
// window at c[0x0][0x160]). The bytes below it are the driver's.
const ParamBase = 0x160

// MaxParamBytes is the largest parameter window this writer accepts: the
// 4 KiB that CUDA 11 allows for kernel parameters.
const MaxParamBytes = 4096

// MaxSharedBytes is the most shared memory one block may use on sm_86 and
// sm_89 (99 KiB), the bound the writer checks static shared memory against.
const MaxSharedBytes = 101376

// cudaToolkitVersion is the toolkit version ptxas 11.8 records twice: in the
// ELF header's e_version field (cuobjdump prints it as "toolkit=118") and in
// each kernel's EIATTR_CUDA_API_VERSION record. It does not follow the PTX
// .version of the source.
const cudaToolkitVersion = 118

// ELF constants of a cubin, as ptxas 11.8 writes them for sm_86 and sm_89.
const (
	elfOSABICUDA     = 0x33 // e_ident[EI_OSABI]
	elfABIVersion    = 7    // e_ident[EI_ABIVERSION]
	elfMachineCUDA   = 190  // e_machine: EM_CUDA
	elfTypeExec      = 2    // e_type: ET_EXEC
	elfFlagTexUnifed = 0x100
	elfFlag64Bit     = 0x400

	shtProgbits = 1
	shtSymtab   = 2
	shtStrtab   = 3
	shtNobits   = 8
	shtCUDAInfo = 0x70000000 // SHT_LOPROC: the .nv.info sections

	shfWrite     = 0x1
	shfAlloc     = 0x2
	shfExecinstr = 0x4

	// The barrier count of a kernel lives in bits 20.. of its .text
	// section's sh_flags (nvdisasm: .sectionflags @"SHF_BARRIERS=n").
	shfBarrierShift = 20
	shfBarrierMask  = 0x7f << shfBarrierShift

	// A .text section's sh_info holds the register count in its top byte
	// (nvdisasm: .sectioninfo @"SHI_REGISTERS=n") and the kernel's symbol
	// index below it.
	shiRegisterShift = 24

	stbLocal    = 0
	stbGlobal   = 1
	sttSection  = 3
	sttFunc     = 2
	stoCUDAEnty = 0x10 // st_other of a kernel symbol: STO_CUDA_ENTRY

	ptLoad = 1
	ptPhdr = 6
	pfX    = 1
	pfW    = 2
	pfR    = 4

	ehdrSize = 64
	shdrSize = 64
	phdrSize = 56
	symSize  = 24

	textAlign      = 128
	constant0Align = 4
)

// Param describes one kernel parameter: its size in bytes and its alignment
// (a power of two) in the parameter window. Parameters are laid out in
// order, each at the next offset that is a multiple of its alignment, from
// ParamBase in constant bank 0; the window is not padded at its end.
type Param struct {
	Size  int // bytes, at least 1
	Align int // a power of two
}

// Kernel describes one kernel (a .entry function) for Write.
type Kernel struct {
	// Name is the kernel's symbol name, as cuModuleGetFunction looks it up.
	Name string

	// Code is the kernel's machine code: 16-byte instruction words, each
	// little-endian with the low 64 bits first, written to .text.<Name> as
	// they are. ptxas ends a kernel with a self-branch (BRA to itself) after
	// the last instruction and pads with NOPs to the next multiple of 128
	// bytes and then 128 bytes more (code ending at 0xd0 gives a 0x180-byte
	// section); the writer adds nothing, so supply them here to match.
	Code []byte

	// Params are the kernel's parameters in declaration order.
	Params []Param

	// Registers is the per-thread register count recorded in EIATTR_REGCOUNT
	// and in the .text section's sh_info, 1 to 255. ptxas 11.8 records the
	// highest general register index the code uses plus 3 (a kernel touching
	// only R1 records 4; one whose highest register is R34 records 37); give
	// at least the highest index plus 1, or the code reads registers it was
	// not allocated.
	Registers int

	// MaxRegisters is the EIATTR_MAXREG_COUNT value: PTX .maxnreg, or 0 for
	// none (written as 0xff, as ptxas does).
	MaxRegisters int

	// Barriers is the number of named barriers the kernel uses: the highest
	// barrier index of its BAR instructions plus 1 (bar.sync 3 gives 4), 0 to
	// 16.
	Barriers int

	// SharedStatic is the kernel's static shared memory in bytes, the size
	// of its .nv.shared.<Name> section. It starts at offset 0 of the
	// kernel's shared memory window.
	SharedStatic int

	// SharedAlign is the alignment of .nv.shared.<Name>: the largest
	// alignment of the shared variables (ptxas writes that). 0 means 16.
	SharedAlign int

	// DynamicShared says that the kernel uses dynamic (extern) shared
	// memory. Its size is not in the cubin: it is a launch argument, and a
	// kernel that wants more than 48 KiB of static plus dynamic shared
	// memory must be opted in at run time with cuFuncSetAttribute(
	// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); ptxas 11.8 writes no
	// cubin attribute for it. What DynamicShared changes is what ptxas does
	// for a module that declares .extern .shared: the .nv.shared.<Name>
	// section is written even when SharedStatic is 0, and its size is
	// SharedStatic rounded up to SharedAlign, where the dynamic memory
	// starts (the code addresses it there).
	DynamicShared bool

	// FrameSize is the per-thread local memory (stack frame) in bytes, as
	// EIATTR_FRAME_SIZE and EIATTR_MIN_STACK_SIZE record it; 0 for kernels
	// that use no local memory.
	FrameSize int

	// MaxThreads is PTX .maxntid (EIATTR_MAX_THREADS); all zero for none.
	// At most one of MaxThreads and ReqThreads may be set.
	MaxThreads [3]int

	// ReqThreads is PTX .reqntid (EIATTR_REQNTID); all zero for none.
	ReqThreads [3]int

	// ExitOffsets are the byte offsets in Code of the EXIT instructions
	// (EIATTR_EXIT_INSTR_OFFSETS), predicated ones included.
	ExitOffsets []int

	// CoopOffsets are the byte offsets in Code of the warp-synchronous
	// instructions (EIATTR_COOP_GROUP_INSTR_OFFSETS). ptxas 11.8 lists SHFL,
	// MATCH, REDUX and the NOP it leaves for bar.warp.sync, but not VOTE.
	CoopOffsets []int
}

// ParamLayout returns the offset of each parameter relative to ParamBase and
// the size of the parameter window (the end of the last parameter).
func ParamLayout(params []Param) (offsets []int, size int, err error) {
	offsets = make([]int, len(params))
	for i, p := range params {
		if p.Size < 1 {
			return nil, 0, fmt.Errorf("%w: parameter %d: size %d is not positive", ErrInvalid, i, p.Size)
		}
		if p.Align < 1 || p.Align&(p.Align-1) != 0 {
			return nil, 0, fmt.Errorf("%w: parameter %d: alignment %d is not a power of two", ErrInvalid, i, p.Align)
		}
		if p.Align > 256 {
			return nil, 0, fmt.Errorf("%w: parameter %d: alignment %d exceeds 256", ErrInvalid, i, p.Align)
		}
		size = alignUp(size, p.Align)
		offsets[i] = size
		size += p.Size
		if size > MaxParamBytes {
			return nil, 0, fmt.Errorf("%w: parameters take more than %d bytes", ErrInvalid, MaxParamBytes)
		}
	}
	return offsets, size, nil
}

// supportedArch reports whether Write writes cubins for sm_<arch>.
func supportedArch(arch int) bool { return arch == 86 || arch == 89 }

// validate checks a kernel description and returns its parameter layout.
func (k *Kernel) validate() (offsets []int, paramSize int, err error) {
	fail := func(format string, a ...any) ([]int, int, error) {
		return nil, 0, fmt.Errorf("%w: kernel %q: %s", ErrInvalid, k.Name, fmt.Sprintf(format, a...))
	}
	if k.Name == "" {
		return fail("empty name")
	}
	for i := 0; i < len(k.Name); i++ {
		if c := k.Name[i]; c == 0 || c > 0x7e || c <= ' ' {
			return fail("name byte %#x at %d is not a printable ASCII character", c, i)
		}
	}
	if len(k.Code) == 0 || len(k.Code)%16 != 0 {
		return fail("code is %d bytes, not a positive multiple of 16", len(k.Code))
	}
	if k.Registers < 1 || k.Registers > 255 {
		return fail("register count %d is outside 1..255", k.Registers)
	}
	if k.MaxRegisters < 0 || k.MaxRegisters > 255 {
		return fail("maximum register count %d is outside 0..255", k.MaxRegisters)
	}
	if k.Barriers < 0 || k.Barriers > 16 {
		return fail("barrier count %d is outside 0..16", k.Barriers)
	}
	if k.SharedStatic < 0 || k.SharedStatic > MaxSharedBytes {
		return fail("static shared memory %d is outside 0..%d", k.SharedStatic, MaxSharedBytes)
	}
	if a := k.SharedAlign; a < 0 || a&(a-1) != 0 || a > 4096 {
		return fail("shared memory alignment %d is not 0 or a power of two up to 4096", a)
	}
	if k.FrameSize < 0 || k.FrameSize%4 != 0 {
		return fail("frame size %d is not a non-negative multiple of 4", k.FrameSize)
	}
	if k.MaxThreads != [3]int{} && k.ReqThreads != [3]int{} {
		return fail("both MaxThreads and ReqThreads are set (PTX allows one of .maxntid and .reqntid)")
	}
	for _, t := range [][3]int{k.MaxThreads, k.ReqThreads} {
		if t == [3]int{} {
			continue
		}
		n := 1
		for _, d := range t {
			if d < 1 || d > 1024 {
				return fail("thread-block dimension %d is outside 1..1024", d)
			}
			n *= d
		}
		if n > 1024 {
			return fail("thread-block size %d exceeds 1024", n)
		}
	}
	for _, set := range []struct {
		what string
		offs []int
	}{{"exit", k.ExitOffsets}, {"cooperative-group", k.CoopOffsets}} {
		for i, o := range set.offs {
			if o < 0 || o >= len(k.Code) || o%16 != 0 {
				return fail("%s instruction offset %#x is not an instruction of the code", set.what, o)
			}
			if i > 0 && o <= set.offs[i-1] {
				return fail("%s instruction offsets are not strictly increasing", set.what)
			}
		}
	}
	offsets, paramSize, err = ParamLayout(k.Params)
	if err != nil {
		return fail("%v", err)
	}
	return offsets, paramSize, nil
}

// sharedLayout returns the size and alignment of .nv.shared.<k>, and whether
// the section is written at all.
func (k *Kernel) sharedLayout() (size, align int, present bool) {
	align = k.SharedAlign
	if align == 0 {
		align = 16
	}
	size = k.SharedStatic
	if k.DynamicShared {
		size = alignUp(size, align)
	}
	return size, align, k.SharedStatic > 0 || k.DynamicShared
}

// Write writes a cubin (an ELF executable for EM_CUDA) holding the
// given kernels, for sm_86 (arch 86) or sm_89 (arch 89).
//
// The file has the sections .shstrtab, .strtab, .symtab, .nv.info and, per
// kernel k, .nv.info.k, .nv.constant0.k (ParamBase plus parameter bytes of
// zeros), .text.k and, where Kernel.sharedLayout says so, .nv.shared.k;
// and the program headers ptxas writes (PHDR, a LOAD of the constant banks
// and code, a LOAD of the shared memory sections if any, and a second LOAD
// of the program headers). The debugging and relocation sections ptxas also
// writes (.debug_frame, .rel.debug_frame, .nv.rel.action) are left out: the
// kernels need no relocation, and .debug_frame serves debuggers.
//
// Kernels appear in the sections in reverse order of the arguments and in
// the global .nv.info in argument order, as ptxas orders the kernels of a
// PTX module. The output depends only on the arguments. A bad kernel
// description is an error; Write does not panic on any input.
//
// Not verified: that the CUDA driver loads and runs the result. No sm_86 or
// sm_89 GPU was available; cuobjdump and nvdisasm accept the output and
// read it as they read ptxas's cubin for the same kernels, nothing more.
func Write(arch int, kernels ...Kernel) ([]byte, error) {
	if !supportedArch(arch) {
		return nil, fmt.Errorf("%w: Write: unsupported architecture sm_%d (want 86 or 89)", ErrInvalid, arch)
	}
	if len(kernels) == 0 {
		return nil, fmt.Errorf("%w: Write: no kernels", ErrInvalid)
	}
	type kinfo struct {
		k         *Kernel
		offsets   []int
		paramSize int
		shSize    int
		shAlign   int
		hasShared bool
		secInfo   int // .nv.info.k
		secConst  int
		secText   int
		secShared int
		symText   int
		symShared int
		symConst  int
		symFunc   int
	}
	seen := map[string]bool{}
	ks := make([]kinfo, len(kernels))
	for i := range kernels {
		k := &kernels[i]
		offs, psize, err := k.validate()
		if err != nil {
			return nil, err
		}
		if seen[k.Name] {
			return nil, fmt.Errorf("%w: Write: kernel %q given twice", ErrInvalid, k.Name)
		}
		seen[k.Name] = true
		ks[i] = kinfo{k: k, offsets: offs, paramSize: psize}
		ks[i].shSize, ks[i].shAlign, ks[i].hasShared = k.sharedLayout()
	}
	// order is the section order of the kernels: the reverse of the
	// argument order.
	order := make([]*kinfo, len(ks))
	for i := range ks {
		order[len(ks)-1-i] = &ks[i]
	}

	// Section indices.
	const (
		secShstrtab = 1
		secStrtab   = 2
		secSymtab   = 3
		secInfo     = 4
	)
	next := secInfo + 1
	for _, ki := range order {
		ki.secInfo = next
		next++
	}
	for _, ki := range order {
		ki.secConst = next
		next++
	}
	for _, ki := range order {
		ki.secText = next
		next++
	}
	for _, ki := range order {
		if ki.hasShared {
			ki.secShared = next
			next++
		}
	}
	numSections := next

	// Symbols: the null symbol, then per kernel its .text, non-empty
	// .nv.shared and .nv.constant0 section symbols, then the kernels.
	var strtab strtabBuilder
	type sym struct {
		name  uint32
		info  byte
		other byte
		shndx uint16
		size  uint64
	}
	syms := []sym{{}}
	for _, ki := range order {
		ki.symText = len(syms)
		syms = append(syms, sym{name: strtab.add(".text." + ki.k.Name), info: stbLocal<<4 | sttSection, shndx: uint16(ki.secText)})
		if ki.hasShared && ki.shSize > 0 {
			ki.symShared = len(syms)
			syms = append(syms, sym{name: strtab.add(".nv.shared." + ki.k.Name), info: stbLocal<<4 | sttSection, shndx: uint16(ki.secShared)})
		}
		ki.symConst = len(syms)
		syms = append(syms, sym{name: strtab.add(".nv.constant0." + ki.k.Name), info: stbLocal<<4 | sttSection, shndx: uint16(ki.secConst)})
	}
	firstGlobal := len(syms)
	for _, ki := range order {
		ki.symFunc = len(syms)
		syms = append(syms, sym{name: strtab.add(ki.k.Name), info: stbGlobal<<4 | sttFunc, other: stoCUDAEnty,
			shndx: uint16(ki.secText), size: uint64(len(ki.k.Code))})
	}
	if numSections > 0xff00 || len(syms) > 1<<24-1 {
		return nil, fmt.Errorf("%w: Write: too many kernels (%d)", ErrInvalid, len(kernels))
	}
	le := binary.LittleEndian
	symtab := make([]byte, 0, len(syms)*symSize)
	for _, s := range syms {
		symtab = le.AppendUint32(symtab, s.name)
		symtab = append(symtab, s.info, s.other)
		symtab = le.AppendUint16(symtab, s.shndx)
		symtab = le.AppendUint64(symtab, 0) // st_value
		symtab = le.AppendUint64(symtab, s.size)
	}

	// The global .nv.info: per kernel, in argument order.
	var globalInfo []InfoRecord
	for i := range ks {
		sym := uint32(ks[i].symFunc)
		frame := uint32(ks[i].k.FrameSize)
		globalInfo = append(globalInfo,
			svalU32(AttrRegCount, sym, uint32(ks[i].k.Registers)),
			svalU32(AttrMaxStackSize, sym, 0),
			svalU32(AttrMinStackSize, sym, frame),
			svalU32(AttrFrameSize, sym, frame),
		)
	}

	// Section table.
	type section struct {
		name                 string
		typ                  uint32
		flags                uint64
		data                 []byte
		size                 uint64 // for NOBITS
		link, info           uint32
		align, entsize       uint64
		offset, nameOffset   uint64
		isShared, isLoadable bool
	}
	secs := make([]section, numSections)
	secs[secShstrtab] = section{name: ".shstrtab", typ: shtStrtab, align: 1}
	secs[secStrtab] = section{name: ".strtab", typ: shtStrtab, align: 1}
	secs[secSymtab] = section{name: ".symtab", typ: shtSymtab, data: symtab, link: secStrtab,
		info: uint32(firstGlobal), align: 8, entsize: symSize}
	secs[secInfo] = section{name: ".nv.info", typ: shtCUDAInfo, data: EncodeInfo(globalInfo), link: secSymtab, align: 4}
	for _, ki := range order {
		k := ki.k
		secs[ki.secInfo] = section{name: ".nv.info." + k.Name, typ: shtCUDAInfo,
			data: EncodeInfo(kernelInfo(arch, k, ki.offsets, ki.paramSize, uint32(ki.symConst))),
			link: secSymtab, info: uint32(ki.secText), align: 4}
		secs[ki.secConst] = section{name: ".nv.constant0." + k.Name, typ: shtProgbits, flags: shfAlloc,
			data: make([]byte, ParamBase+ki.paramSize), info: uint32(ki.secText), align: constant0Align, isLoadable: true}
		secs[ki.secText] = section{name: ".text." + k.Name, typ: shtProgbits,
			flags: shfAlloc | shfExecinstr | uint64(k.Barriers)<<shfBarrierShift,
			data:  k.Code, link: secSymtab, info: uint32(k.Registers)<<shiRegisterShift | uint32(ki.symFunc),
			align: textAlign, isLoadable: true}
		if ki.hasShared {
			secs[ki.secShared] = section{name: ".nv.shared." + k.Name, typ: shtNobits, flags: shfWrite | shfAlloc,
				size: uint64(ki.shSize), info: uint32(ki.secText), align: uint64(ki.shAlign), isShared: true}
		}
	}
	var shstrtab strtabBuilder
	for i := 1; i < numSections; i++ {
		secs[i].nameOffset = uint64(shstrtab.add(secs[i].name))
	}
	secs[secShstrtab].data = shstrtab.bytes()
	secs[secStrtab].data = strtab.bytes()

	// File layout: header, section contents, section headers, program
	// headers.
	off := uint64(ehdrSize)
	var loadStart, loadEnd, sharedStart, sharedMem uint64
	haveLoad, haveShared := false, false
	for i := 1; i < numSections; i++ {
		s := &secs[i]
		off = alignUp64(off, s.align)
		s.offset = off
		if s.typ == shtNobits {
			if !haveShared {
				sharedStart, haveShared = off, true
			}
			sharedMem = alignUp64(sharedMem, s.align) + s.size
			continue
		}
		s.size = uint64(len(s.data))
		off += s.size
		if s.isLoadable {
			if !haveLoad {
				loadStart, haveLoad = s.offset, true
			}
			loadEnd = off
		}
	}
	shoff := alignUp64(off, 8)
	phoff := shoff + uint64(numSections)*shdrSize
	type phdr struct {
		typ, flags                uint32
		off, filesz, memsz, align uint64
	}
	phnum := 3
	if haveShared {
		phnum = 4
	}
	phSize := uint64(phnum) * phdrSize
	phdrs := []phdr{
		{typ: ptPhdr, flags: pfR | pfX, off: phoff, filesz: phSize, memsz: phSize, align: 8},
		{typ: ptLoad, flags: pfR | pfX, off: loadStart, filesz: loadEnd - loadStart, memsz: loadEnd - loadStart, align: 8},
	}
	if haveShared {
		phdrs = append(phdrs, phdr{typ: ptLoad, flags: pfR | pfW, off: sharedStart, memsz: sharedMem, align: 8})
	}
	phdrs = append(phdrs, phdr{typ: ptLoad, flags: pfR | pfX, off: phoff, filesz: phSize, memsz: phSize, align: 8})

	out := make([]byte, 0, phoff+phSize)
	// ELF header.
	out = append(out, 0x7f, 'E', 'L', 'F', 2 /* ELFCLASS64 */, 1 /* ELFDATA2LSB */, 1 /* EV_CURRENT */, elfOSABICUDA, elfABIVersion)
	out = append(out, make([]byte, 16-len(out))...)
	out = le.AppendUint16(out, elfTypeExec)
	out = le.AppendUint16(out, elfMachineCUDA)
	out = le.AppendUint32(out, cudaToolkitVersion)
	out = le.AppendUint64(out, 0) // e_entry
	out = le.AppendUint64(out, phoff)
	out = le.AppendUint64(out, shoff)
	out = le.AppendUint32(out, ElfFlags(arch))
	out = le.AppendUint16(out, ehdrSize)
	out = le.AppendUint16(out, phdrSize)
	out = le.AppendUint16(out, uint16(phnum))
	out = le.AppendUint16(out, shdrSize)
	out = le.AppendUint16(out, uint16(numSections))
	out = le.AppendUint16(out, secShstrtab)
	// Section contents.
	for i := 1; i < numSections; i++ {
		s := &secs[i]
		if s.typ == shtNobits {
			continue
		}
		out = append(out, make([]byte, int(s.offset)-len(out))...)
		out = append(out, s.data...)
	}
	out = append(out, make([]byte, int(shoff)-len(out))...)
	// Section headers.
	out = append(out, make([]byte, shdrSize)...)
	for i := 1; i < numSections; i++ {
		s := &secs[i]
		out = le.AppendUint32(out, uint32(s.nameOffset))
		out = le.AppendUint32(out, s.typ)
		out = le.AppendUint64(out, s.flags)
		out = le.AppendUint64(out, 0) // sh_addr
		out = le.AppendUint64(out, s.offset)
		out = le.AppendUint64(out, s.size)
		out = le.AppendUint32(out, s.link)
		out = le.AppendUint32(out, s.info)
		out = le.AppendUint64(out, s.align)
		out = le.AppendUint64(out, s.entsize)
	}
	// Program headers.
	for _, p := range phdrs {
		out = le.AppendUint32(out, p.typ)
		out = le.AppendUint32(out, p.flags)
		out = le.AppendUint64(out, p.off)
		out = le.AppendUint64(out, 0) // p_vaddr
		out = le.AppendUint64(out, 0) // p_paddr
		out = le.AppendUint64(out, p.filesz)
		out = le.AppendUint64(out, p.memsz)
		out = le.AppendUint64(out, p.align)
	}
	return out, nil
}

// ElfFlags returns the e_flags of an sm_<arch> cubin as ptxas 11.8 writes
// it: the SASS architecture in bits 0-7, EF_CUDA_TEXMODE_UNIFIED (0x100),
// EF_CUDA_64BIT_ADDRESS (0x400) and the virtual (PTX) architecture in bits
// 16-23 (0x560556 for sm_86).
func ElfFlags(arch int) uint32 {
	return uint32(arch)<<16 | elfFlag64Bit | elfFlagTexUnifed | uint32(arch)
}

// kernelInfo returns the records of a kernel's .nv.info.<k> section in the
// order ptxas writes them.
func kernelInfo(arch int, k *Kernel, offsets []int, paramSize int, constSym uint32) []InfoRecord {
	le := binary.LittleEndian
	recs := []InfoRecord{{Format: FormatSVal, Attr: AttrCUDAAPIVersion, Data: le.AppendUint32(nil, cudaToolkitVersion)}}
	if arch == 86 {
		// ptxas writes this flag (no value) for sm_86 but not for sm_89.
		recs = append(recs, InfoRecord{Format: FormatNVal, Attr: AttrSW2861232WAR})
	}
	if len(k.Params) > 0 {
		d := le.AppendUint32(nil, constSym)
		d = le.AppendUint16(d, ParamBase)
		d = le.AppendUint16(d, uint16(paramSize))
		recs = append(recs,
			InfoRecord{Format: FormatSVal, Attr: AttrParamCBank, Data: d},
			InfoRecord{Format: FormatHVal, Attr: AttrCBankParamSize, Value: uint16(paramSize)})
		for i := len(k.Params) - 1; i >= 0; i-- {
			recs = append(recs, KParamInfo{Ordinal: i, Offset: offsets[i], Size: k.Params[i].Size}.record())
		}
	}
	maxreg := k.MaxRegisters
	if maxreg == 0 {
		maxreg = 0xff
	}
	recs = append(recs, InfoRecord{Format: FormatHVal, Attr: AttrMaxRegCount, Value: uint16(maxreg)})
	if len(k.CoopOffsets) > 0 {
		recs = append(recs, InfoRecord{Format: FormatSVal, Attr: AttrCoopGroupInstrOffsets, Data: u32s(k.CoopOffsets)})
	}
	if len(k.ExitOffsets) > 0 {
		recs = append(recs, InfoRecord{Format: FormatSVal, Attr: AttrExitInstrOffsets, Data: u32s(k.ExitOffsets)})
	}
	if k.MaxThreads != [3]int{} {
		recs = append(recs, InfoRecord{Format: FormatSVal, Attr: AttrMaxThreads, Data: u32s(k.MaxThreads[:])})
	}
	if k.ReqThreads != [3]int{} {
		recs = append(recs, InfoRecord{Format: FormatSVal, Attr: AttrReqNTID, Data: u32s(k.ReqThreads[:])})
	}
	return recs
}

func svalU32(a InfoAttr, sym, v uint32) InfoRecord {
	d := binary.LittleEndian.AppendUint32(nil, sym)
	return InfoRecord{Format: FormatSVal, Attr: a, Data: binary.LittleEndian.AppendUint32(d, v)}
}

func u32s(vs []int) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

func alignUp(n, a int) int { return (n + a - 1) &^ (a - 1) }

func alignUp64(n, a uint64) uint64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) &^ (a - 1)
}

// strtabBuilder builds an ELF string table: a NUL byte, then each distinct
// string once, NUL-terminated, in the order first added.
type strtabBuilder struct {
	buf bytes.Buffer
	at  map[string]uint32
}

func (t *strtabBuilder) add(s string) uint32 {
	if t.at == nil {
		t.at = map[string]uint32{}
		t.buf.WriteByte(0)
	}
	if o, ok := t.at[s]; ok {
		return o
	}
	o := uint32(t.buf.Len())
	t.buf.WriteString(s)
	t.buf.WriteByte(0)
	t.at[s] = o
	return o
}

func (t *strtabBuilder) bytes() []byte {
	if t.at == nil {
		return []byte{0}
	}
	return t.buf.Bytes()
}

package cubin

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrRelocation: a relocation of a kernel's code that Relocate cannot
// apply: a type it does not know, or a symbol without an address.
var ErrRelocation = errors.New("cubin: relocation not applied")

// Reloc is one relocation of a kernel's code (.rel.text.<kernel>, REL
// entries: the addend is the field's value in the code; .rela.text.<kernel>,
// RELA entries: Addend).
type Reloc struct {
	Offset uint64 // byte offset in the kernel's .text section
	Sym    string // the symbol whose address is placed
	Type   uint32 // the R_CUDA type number
	RELA   bool   // the addend is Addend, not the field's value
	Addend int64
}

// relocKind says where a relocation type puts its value in the 128-bit
// instruction word: bits [pos, pos+width) take value>>shift. The types
// and names are those cuobjdump -elf 11.8 prints for nvcc's and ptxas's
// sm_86 cubins (testdata/nvcc: __device__ globals; testdata/ptxas
// tail2_sync: printf's format and vprintf), the fields where nvdisasm
// prints 32@lo(sym) / 32@hi(sym) (UMOV's immediate at bit 32).
type relocKind struct {
	name              string
	pos, width, shift uint
}

var relocKinds = map[uint32]relocKind{
	0x38: {"R_CUDA_ABS32_LO_32", 32, 32, 0},
	0x39: {"R_CUDA_ABS32_HI_32", 32, 32, 32},
}

// dataRelocKinds are the types RelocateSection applies to a data section:
// a 64-bit little-endian address. nvcc writes R_CUDA_G64 into
// .rela.nv.constant3 for a __constant__ pointer initialised with a
// __device__ global's address (testdata/nvcc reloc.cu: cp = &g[1], addend
// 4).
var dataRelocKinds = map[uint32]string{
	0x04: "R_CUDA_G64",
}

// relocNames names the types seen in cubins that Relocate does not apply.
var relocNames = map[uint32]string{
	0x02: "R_CUDA_64",       // .debug_frame's function addresses
	0x3a: "R_CUDA_ABS47_34", // CALL.ABS to an external function (vprintf)
}

// RelocName returns the name of an R_CUDA type ("R_CUDA_ABS32_LO_32"), or
// "R_CUDA type 0x.." for one not seen.
func RelocName(t uint32) string {
	if k, ok := relocKinds[t]; ok {
		return k.name
	}
	if n, ok := dataRelocKinds[t]; ok {
		return n
	}
	if n, ok := relocNames[t]; ok {
		return n
	}
	return fmt.Sprintf("R_CUDA type %#x", t)
}

// Relocations returns the relocations of kernel's code (none when the
// cubin has no .rel.text.<kernel>).
func (c *File) Relocations(kernel string) ([]Reloc, error) {
	return c.SectionRelocations(".text." + kernel)
}

// SectionRelocations returns the relocations of the named section (none
// when the cubin has no .rel<section> or .rela<section>).
func (c *File) SectionRelocations(section string) ([]Reloc, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil File", ErrFormat)
	}
	var out []Reloc
	for _, name := range []string{".rel" + section, ".rela" + section} {
		s := c.Section(name)
		if s == nil {
			continue
		}
		ent := 16
		if s.Type == elf.SHT_RELA {
			ent = 24
		}
		if len(s.Data)%ent != 0 {
			return nil, fmt.Errorf("%w: %s: size %d not a multiple of %d", ErrFormat, name, len(s.Data), ent)
		}
		for o := 0; o < len(s.Data); o += ent {
			off := binary.LittleEndian.Uint64(s.Data[o:])
			info := binary.LittleEndian.Uint64(s.Data[o+8:])
			sym := int(info >> 32)
			if sym <= 0 || sym >= len(c.Symbols) {
				return nil, fmt.Errorf("%w: %s: symbol %d out of range", ErrFormat, name, sym)
			}
			r := Reloc{Offset: off, Sym: c.Symbols[sym].Name, Type: uint32(info)}
			if ent == 24 {
				r.RELA, r.Addend = true, int64(binary.LittleEndian.Uint64(s.Data[o+16:]))
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Relocate returns a copy of kernel's code with its relocations applied:
// addr gives each symbol's address (a __device__ global's in the
// simulator's memory). A relocation of a type it does not model, or of a
// symbol addr does not know, is an error naming both (ErrRelocation);
// code is then nil.
func (c *File) Relocate(kernel string, addr func(sym string) (uint64, bool)) ([]byte, error) {
	rs, err := c.Relocations(kernel)
	if err != nil {
		return nil, err
	}
	s := c.Section(".text." + kernel)
	if s == nil {
		return nil, fmt.Errorf("%w: no section .text.%s", ErrFormat, kernel)
	}
	code := append([]byte(nil), s.Data...)
	for _, r := range rs {
		k, ok := relocKinds[r.Type]
		if !ok {
			return nil, fmt.Errorf("%w: %s of %s at %#x in %s: type not modelled", ErrRelocation, RelocName(r.Type), r.Sym, r.Offset, kernel)
		}
		if r.Offset%16 != 0 || r.Offset+16 > uint64(len(code)) {
			return nil, fmt.Errorf("%w: %s of %s at %#x: outside %s's code", ErrFormat, k.name, r.Sym, r.Offset, kernel)
		}
		a, ok := addr(r.Sym)
		if !ok {
			return nil, fmt.Errorf("%w: %s of %s at %#x in %s: no address for the symbol", ErrRelocation, k.name, r.Sym, r.Offset, kernel)
		}
		w := code[r.Offset : r.Offset+16]
		lo, hi := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		// k.pos is 32: the field is the low half's top 32 bits
		add := uint64(r.Addend)
		if f := lo >> k.pos & (1<<k.width - 1); !r.RELA && f != 0 {
			// nvcc leaves the field zero; how a HI part's implicit addend
			// combines is not known
			return nil, fmt.Errorf("%w: %s of %s at %#x in %s: nonzero implicit addend %#x", ErrRelocation, k.name, r.Sym, r.Offset, kernel, f)
		}
		v := (a + add) >> k.shift & (1<<k.width - 1)
		lo = lo&^((1<<k.width-1)<<k.pos) | v<<k.pos
		binary.LittleEndian.PutUint64(w, lo)
		binary.LittleEndian.PutUint64(w[8:], hi)
	}
	return code, nil
}

// RelocateSection returns a copy of a data section's bytes (a constant
// bank, .nv.constant3) with its relocations applied: addr gives each
// symbol's address. A type other than dataRelocKinds' (a function
// address, R_CUDA_64 of .debug_frame), a symbol addr does not know, or a
// field outside the section is an error naming the relocation
// (ErrRelocation, ErrFormat); the bytes are then nil.
func (c *File) RelocateSection(section string, addr func(sym string) (uint64, bool)) ([]byte, error) {
	rs, err := c.SectionRelocations(section)
	if err != nil {
		return nil, err
	}
	s := c.Section(section)
	if s == nil {
		return nil, fmt.Errorf("%w: no section %s", ErrFormat, section)
	}
	data := append([]byte(nil), s.Data...)
	for _, r := range rs {
		name, ok := dataRelocKinds[r.Type]
		if !ok {
			return nil, fmt.Errorf("%w: %s of %s at %#x in %s: type not modelled", ErrRelocation, RelocName(r.Type), r.Sym, r.Offset, section)
		}
		if r.Offset+8 > uint64(len(data)) || r.Offset+8 < r.Offset {
			return nil, fmt.Errorf("%w: %s of %s at %#x: outside %s (%d bytes)", ErrFormat, name, r.Sym, r.Offset, section, len(data))
		}
		a, ok := addr(r.Sym)
		if !ok {
			return nil, fmt.Errorf("%w: %s of %s at %#x in %s: no address for the symbol", ErrRelocation, name, r.Sym, r.Offset, section)
		}
		f := data[r.Offset : r.Offset+8]
		add := uint64(r.Addend)
		if !r.RELA {
			add = binary.LittleEndian.Uint64(f)
		}
		binary.LittleEndian.PutUint64(f, a+add)
	}
	return data, nil
}

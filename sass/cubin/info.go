package cubin

import (
	"encoding/binary"
	"fmt"
)

// InfoFormat is the format byte of a .nv.info record: how the record's
// value is stored.
type InfoFormat uint8

// The .nv.info record formats (cuobjdump names them EIFMT_*).
const (
	// FormatNVal: no value; the 16-bit field after the attribute is 0.
	FormatNVal InfoFormat = 1
	// FormatBVal: a byte value in the 16-bit field (not seen from ptxas 11.8
	// for sm_86/89; read like FormatHVal).
	FormatBVal InfoFormat = 2
	// FormatHVal: a 16-bit value in the field after the attribute.
	FormatHVal InfoFormat = 3
	// FormatSVal: the 16-bit field is the size of a payload that follows.
	FormatSVal InfoFormat = 4
)

var formatNames = map[InfoFormat]string{
	FormatNVal: "EIFMT_NVAL",
	FormatBVal: "EIFMT_BVAL",
	FormatHVal: "EIFMT_HVAL",
	FormatSVal: "EIFMT_SVAL",
}

// String returns cuobjdump's name of the format.
func (f InfoFormat) String() string {
	if n, ok := formatNames[f]; ok {
		return n
	}
	return fmt.Sprintf("EIFMT_%#x", uint8(f))
}

// InfoAttr is the attribute byte of a .nv.info record.
type InfoAttr uint8

// The .nv.info attributes the writer uses or ptxas 11.8 was seen to write
// for sm_86/89 kernels, with the codes read from its cubins and the names
// cuobjdump -elf prints for them.
const (
	AttrMaxThreads            InfoAttr = 0x05 // .maxntid: 3 × u32
	AttrParamCBank            InfoAttr = 0x0a // u32 symbol of .nv.constant0.k, u16 window offset, u16 window size
	AttrReqNTID               InfoAttr = 0x10 // .reqntid: 3 × u32
	AttrFrameSize             InfoAttr = 0x11 // global: u32 kernel symbol, u32 bytes
	AttrMinStackSize          InfoAttr = 0x12 // global: u32 kernel symbol, u32 bytes
	AttrKParamInfo            InfoAttr = 0x17 // one parameter: see KParamInfo
	AttrCBankParamSize        InfoAttr = 0x19 // HVAL: parameter window size
	AttrMaxRegCount           InfoAttr = 0x1b // HVAL: .maxnreg, 0xff for none
	AttrExitInstrOffsets      InfoAttr = 0x1c // u32 code offsets of EXIT
	AttrMaxStackSize          InfoAttr = 0x23 // global: u32 kernel symbol, u32 bytes
	AttrCoopGroupInstrOffsets InfoAttr = 0x28 // u32 code offsets of SHFL, MATCH, REDUX, …
	AttrRegCount              InfoAttr = 0x2f // global: u32 kernel symbol, u32 registers
	AttrSW2861232WAR          InfoAttr = 0x35 // NVAL: a workaround flag ptxas sets on sm_86 only
	AttrCUDAAPIVersion        InfoAttr = 0x37 // u32 toolkit version (118 for 11.8)
)

var attrNames = map[InfoAttr]string{
	AttrMaxThreads:            "EIATTR_MAX_THREADS",
	AttrParamCBank:            "EIATTR_PARAM_CBANK",
	AttrReqNTID:               "EIATTR_REQNTID",
	AttrFrameSize:             "EIATTR_FRAME_SIZE",
	AttrMinStackSize:          "EIATTR_MIN_STACK_SIZE",
	AttrKParamInfo:            "EIATTR_KPARAM_INFO",
	AttrCBankParamSize:        "EIATTR_CBANK_PARAM_SIZE",
	AttrMaxRegCount:           "EIATTR_MAXREG_COUNT",
	AttrExitInstrOffsets:      "EIATTR_EXIT_INSTR_OFFSETS",
	AttrMaxStackSize:          "EIATTR_MAX_STACK_SIZE",
	AttrCoopGroupInstrOffsets: "EIATTR_COOP_GROUP_INSTR_OFFSETS",
	AttrRegCount:              "EIATTR_REGCOUNT",
	AttrSW2861232WAR:          "EIATTR_SW2861232_WAR",
	AttrCUDAAPIVersion:        "EIATTR_CUDA_API_VERSION",
}

// String returns cuobjdump's name of the attribute, or its code for one
// this package does not know.
func (a InfoAttr) String() string {
	if n, ok := attrNames[a]; ok {
		return n
	}
	return fmt.Sprintf("EIATTR_%#02x", uint8(a))
}

// symbolAttrs are the attributes whose payload starts with a u32 symbol
// index (a comparison of two cubins must map it to the symbol's name).
var symbolAttrs = map[InfoAttr]bool{
	AttrRegCount:     true,
	AttrMaxStackSize: true,
	AttrMinStackSize: true,
	AttrFrameSize:    true,
	AttrParamCBank:   true,
}

// HasSymbol reports whether the record's payload starts with a symbol index
// (of the kernel, or of its .nv.constant0 section for EIATTR_PARAM_CBANK).
func (r InfoRecord) HasSymbol() bool {
	return r.Format == FormatSVal && symbolAttrs[r.Attr] && len(r.Data) >= 4
}

// Symbol returns the symbol index a record starts with; see HasSymbol.
func (r InfoRecord) Symbol() uint32 {
	if !r.HasSymbol() {
		return 0
	}
	return binary.LittleEndian.Uint32(r.Data)
}

// InfoRecord is one record of a .nv.info section: a format byte, an
// attribute byte, a 16-bit field and, for FormatSVal, a payload of that many
// bytes. Value holds the 16-bit field of the other formats.
type InfoRecord struct {
	Format InfoFormat
	Attr   InfoAttr
	Value  uint16 // FormatNVal, FormatBVal, FormatHVal
	Data   []byte // FormatSVal
}

// String formats the record for test failures and debugging.
func (r InfoRecord) String() string {
	if r.Format == FormatSVal {
		return fmt.Sprintf("%v %v % x", r.Attr, r.Format, r.Data)
	}
	return fmt.Sprintf("%v %v %#x", r.Attr, r.Format, r.Value)
}

// U32s returns a FormatSVal payload as little-endian 32-bit words.
func (r InfoRecord) U32s() []uint32 {
	out := make([]uint32, len(r.Data)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(r.Data[4*i:])
	}
	return out
}

// EncodeInfo encodes records as a .nv.info section, each record starting
// at a multiple of 4 bytes (ptxas's payloads are all multiples of 4, so no
// padding appears in practice).
func EncodeInfo(recs []InfoRecord) []byte {
	var b []byte
	for _, r := range recs {
		b = append(b, byte(r.Format), byte(r.Attr))
		if r.Format == FormatSVal {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(r.Data)))
			b = append(b, r.Data...)
		} else {
			b = binary.LittleEndian.AppendUint16(b, r.Value)
		}
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

// ParseInfo decodes a .nv.info section into records.
func ParseInfo(b []byte) ([]InfoRecord, error) {
	var recs []InfoRecord
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return nil, fmt.Errorf("%w: .nv.info: %d trailing bytes at %#x", ErrFormat, len(b)-off, off)
		}
		r := InfoRecord{Format: InfoFormat(b[off]), Attr: InfoAttr(b[off+1])}
		v := binary.LittleEndian.Uint16(b[off+2:])
		off += 4
		switch r.Format {
		case FormatNVal, FormatBVal, FormatHVal:
			r.Value = v
		case FormatSVal:
			if int(v) > len(b)-off {
				return nil, fmt.Errorf("%w: .nv.info: %v record at %#x runs past the section", ErrFormat, r.Attr, off-4)
			}
			r.Data = append([]byte{}, b[off:off+int(v)]...)
			off += int(v)
			off = alignUp(off, 4)
		default:
			return nil, fmt.Errorf("%w: .nv.info: unknown record format %#x at %#x", ErrFormat, uint8(r.Format), off-4)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// KParamInfo is the payload of an EIATTR_KPARAM_INFO record, one kernel
// parameter. Its 12 bytes are a u32 index (0 in every ptxas output seen), a
// u16 ordinal, a u16 offset in the parameter window, and a u32 of flags:
// bits 12-16 the constant bank (0x1f), bits 18-31 the size in bytes; ptxas
// 11.8 leaves the other bits 0 for plain parameters (cuobjdump reads them as
// the pointee's log-alignment, space, and parameter space 0 = CBANK).
type KParamInfo struct {
	Index   int
	Ordinal int
	Offset  int
	Size    int
	Flags   uint32 // the bits other than the bank and size fields
}

const (
	kparamCBankShift = 12
	kparamCBankMask  = 0x1f << kparamCBankShift
	kparamSizeShift  = 18
	kparamCBank      = 0x1f
)

func (p KParamInfo) record() InfoRecord {
	le := binary.LittleEndian
	d := le.AppendUint32(nil, uint32(p.Index))
	d = le.AppendUint16(d, uint16(p.Ordinal))
	d = le.AppendUint16(d, uint16(p.Offset))
	d = le.AppendUint32(d, p.Flags|kparamCBank<<kparamCBankShift|uint32(p.Size)<<kparamSizeShift)
	return InfoRecord{Format: FormatSVal, Attr: AttrKParamInfo, Data: d}
}

// ParseKParamInfo decodes an EIATTR_KPARAM_INFO record.
func ParseKParamInfo(r InfoRecord) (KParamInfo, error) {
	if r.Attr != AttrKParamInfo || r.Format != FormatSVal || len(r.Data) != 12 {
		return KParamInfo{}, fmt.Errorf("%w: not a 12-byte EIATTR_KPARAM_INFO record: %v", ErrFormat, r)
	}
	le := binary.LittleEndian
	f := le.Uint32(r.Data[8:])
	if bank := (f & kparamCBankMask) >> kparamCBankShift; bank != kparamCBank {
		return KParamInfo{}, fmt.Errorf("%w: EIATTR_KPARAM_INFO: constant bank %#x, want %#x", ErrFormat, bank, kparamCBank)
	}
	return KParamInfo{
		Index:   int(le.Uint32(r.Data)),
		Ordinal: int(le.Uint16(r.Data[4:])),
		Offset:  int(le.Uint16(r.Data[6:])),
		Size:    int(f >> kparamSizeShift),
		Flags:   f &^ (kparamCBankMask | 0x3fff<<kparamSizeShift),
	}, nil
}

package tile

import "fmt"

// DType is an element type. The zero value is Invalid.
type DType uint8

// Element types. Float8 formats follow the OCP FP8 specification: E4M3 is
// the "fn" variant (no infinities, NaN only as 0x7F/0xFF, largest finite 448),
// E5M2 is IEEE-like (largest finite 57344).
const (
	Invalid DType = iota
	F32
	F16
	BF16
	E4M3
	E5M2
	F64
	S8
	U8
	S16
	U16
	S32
	U32
	S64
	U64
	S4 // packed 4-bit signed integer (two per byte); storage only
	U4 // packed 4-bit unsigned integer (two per byte); storage only
	numDTypes
)

// dtypeInfo is one row of the element-type table.
type dtypeInfo struct {
	name    string
	bits    int
	float   bool
	signed  bool
	integer bool
}

var dtypeTable = [numDTypes]dtypeInfo{
	Invalid: {name: "invalid"},
	F32:     {name: "f32", bits: 32, float: true, signed: true},
	F16:     {name: "f16", bits: 16, float: true, signed: true},
	BF16:    {name: "bf16", bits: 16, float: true, signed: true},
	E4M3:    {name: "e4m3", bits: 8, float: true, signed: true},
	E5M2:    {name: "e5m2", bits: 8, float: true, signed: true},
	F64:     {name: "f64", bits: 64, float: true, signed: true},
	S8:      {name: "s8", bits: 8, integer: true, signed: true},
	U8:      {name: "u8", bits: 8, integer: true},
	S16:     {name: "s16", bits: 16, integer: true, signed: true},
	U16:     {name: "u16", bits: 16, integer: true},
	S32:     {name: "s32", bits: 32, integer: true, signed: true},
	U32:     {name: "u32", bits: 32, integer: true},
	S64:     {name: "s64", bits: 64, integer: true, signed: true},
	U64:     {name: "u64", bits: 64, integer: true},
	S4:      {name: "s4", bits: 4, integer: true, signed: true},
	U4:      {name: "u4", bits: 4, integer: true},
}

func (d DType) info() dtypeInfo {
	if d >= numDTypes {
		return dtypeTable[Invalid]
	}
	return dtypeTable[d]
}

// Valid reports whether d is a defined element type.
func (d DType) Valid() bool { return d != Invalid && d < numDTypes }

// String returns the short name ("f32", "bf16", "e4m3", ...).
func (d DType) String() string {
	if !d.Valid() {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return d.info().name
}

// Bits is the width of one element in bits (4 for the packed types).
func (d DType) Bits() int { return d.info().bits }

// Size is the size of one element in bytes; 0 for packed sub-byte types and
// for Invalid.
func (d DType) Size() int { return d.info().bits / 8 }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d.info().float }

// IsInteger reports whether d is an integer type.
func (d DType) IsInteger() bool { return d.info().integer }

// IsSigned reports whether d can represent negative values.
func (d DType) IsSigned() bool { return d.info().signed }

// IsPacked reports whether elements are smaller than a byte.
func (d DType) IsPacked() bool { return d.Valid() && d.info().bits < 8 }

// ParseDType returns the element type named s (as printed by String).
func ParseDType(s string) (DType, error) {
	for i := DType(1); i < numDTypes; i++ {
		if dtypeTable[i].name == s {
			return i, nil
		}
	}
	return Invalid, Errorf(ErrDType, "", "dtype", "unknown element type %q", s)
}

// DTypes returns every defined element type in table order.
func DTypes() []DType {
	out := make([]DType, 0, numDTypes-1)
	for i := DType(1); i < numDTypes; i++ {
		out = append(out, i)
	}
	return out
}

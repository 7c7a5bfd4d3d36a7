package ptx

import "math"

// Ptr is a device-pointer parameter slot.
func Ptr(addr uint64) uint64 { return addr }

// U64 is a 64-bit integer parameter slot.
func U64(v uint64) uint64 { return v }

// I64 is a signed 64-bit integer parameter slot.
func I64(v int64) uint64 { return uint64(v) }

// U32 is a 32-bit unsigned parameter slot (the low half).
func U32(v uint32) uint64 { return uint64(v) }

// I32 is a 32-bit signed parameter slot (the low half; the high half is
// zero, not a sign extension).
func I32(v int32) uint64 { return uint64(uint32(v)) }

// F32 is a float32 parameter slot (its bits in the low half).
func F32(v float32) uint64 { return uint64(math.Float32bits(v)) }

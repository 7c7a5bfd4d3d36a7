// Package ptx holds tcrt's hand-written PTX kernels, embedded, with the
// cubins ptxas assembles from them for sm_86 and sm_89 (go generate runs
// gen.sh). The CUDA backend (runtime, -tags cuda) loads a module's cubin
// when the device can run it and otherwise its PTX, which the driver
// compiles; Module.Select makes that choice and says why.
//
// The package is pure Go and has no build tag: it only embeds bytes and
// describes them, so ptxas checks and the selection rules are tested on
// machines without a GPU.
//
// # Parameters
//
// Every kernel parameter is passed in an 8-byte slot (a uint64): pointers
// and 64-bit integers fill it, 32-bit values sit in its low half. Ptr, U64,
// U32, I32 and F32 make slots.
//
// # float8 (module F8)
//
//	tcrt_f8_quantize(dst *u8, src *f32, scales *f32, rows, cols u64, flags u32)
//	tcrt_f8_dequantize(dst *f32, src *u8, scales *f32, rows, cols u64, flags u32)
//
// Quantise writes dst[i] = f8(src[i]·scale) with round to nearest even;
// dequantise dst[i] = f32(src[i])·scale (the f32 product rounded once).
// The scale is scales[0] for the whole tensor, or scales[r] for row r with
// F8PerRow. Flags: F8E5M2 selects E5M2 (else E4M3 "fn"); F8NonSaturating
// sends overflow to NaN (E4M3) or ±Inf (E5M2) instead of the largest finite
// value; a NaN input keeps its sign. Per tensor, src and dst must be aligned
// to 16 bytes (the wider side) and 4 bytes; F8Grid gives the launch shape.
// The conversion is integer bit code on every target: ptxas 11.8 accepts
// cvt.rn.satfinite.e4m3x2.f32 only for sm_90 (PTX 7.8; sm_89 needs PTX 8.1).
//
// # Scatter–gather (module SG)
//
// Gathers, scatters, gather-CAS, the tile contract's preflight kernels and
// the pad fill: see SG for the parameters and sg.ptx for each kernel.
//
// # Light ops (module Light)
//
// RMSNorm with the fused residual add, SiLU·mul and rotary embeddings: see
// Light for the parameters and light.ptx for each kernel; they run on the
// simulated devices in the ops GPU suite (TestGPULightOps, TestGPURoPE).
//
// None of these kernels has run on a GPU from this package's tests: ptxas
// accepting them and a Go transliteration of the conversion matching the
// reference are what is verified on a CPU.
package ptx

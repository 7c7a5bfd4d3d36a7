// Package sass is the SM86/SM89 (Ampere GA10x, Ada) toolchain of tcrt: a
// typed model of the SASS instructions hand-scheduled kernels need, each with
// its control word (stall, yield, scoreboards, wait mask, operand reuse); an
// encoder and decoder for the 128-bit instruction words; a printer whose text
// matches nvdisasm's and a parser for that text; a cubin (ELF) writer; a
// functional simulator and a schedule checker; and the kernels written
// against the model.
//
// Encodings are learnt from outside NVIDIA's binaries: PTX assembled with
// ptxas and read back with nvdisasm, one field varied at a time.
package sass

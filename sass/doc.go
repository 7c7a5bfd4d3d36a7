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
//
// WriteCubin's output is checked only against ptxas, cuobjdump and nvdisasm;
// that the CUDA driver loads and runs a cubin written from scratch has not been
// verified on an sm_86/89 GPU (none is available to this project).
package sass

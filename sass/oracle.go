package sass

import "sync"

// OracleEntry is a program the live oracle test checks: every instruction
// encoded, disassembled by nvdisasm, and its text compared with the printer.
type OracleEntry struct {
	Name    string
	Program Program
	// Arch is the nvdisasm architecture, 86 (default) or 89.
	Arch int
}

var (
	oracleMu       sync.Mutex
	oraclePrograms []OracleEntry
)

// OracleProgram registers a program (a kernel, a test program) for the
// live oracle test of this package; kernels call it from init so that every
// shipped kernel is checked against nvdisasm whenever the tools are present.
func OracleProgram(name string, arch int, p Program) {
	if arch == 0 {
		arch = 86
	}
	oracleMu.Lock()
	defer oracleMu.Unlock()
	oraclePrograms = append(oraclePrograms, OracleEntry{Name: name, Program: p, Arch: arch})
}

// OraclePrograms returns the registered programs.
func OraclePrograms() []OracleEntry {
	oracleMu.Lock()
	defer oracleMu.Unlock()
	return append([]OracleEntry(nil), oraclePrograms...)
}

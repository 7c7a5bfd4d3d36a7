package ops_test

import "github.com/tcrt-go/tcrt/runtime"

// The GPU suite also runs on the real GPU (skipped when none opens): the
// same tests, on the simulated devices and on CUDA.
func init() {
	gpuSuiteBackends = append(gpuSuiteBackends, struct {
		kind runtime.BackendKind
		arch int
	}{runtime.BackendCUDA, 0})
}

//go:build cuda

package ops_test

import "github.com/tcrt-go/tcrt/runtime"

// In a -tags cuda build the GPU suite also runs on the real GPU (skipped
// when none opens): the same tests, two devices.
func init() {
	gpuSuiteBackends = append(gpuSuiteBackends, struct {
		kind runtime.BackendKind
		arch int
	}{runtime.BackendCUDA, 0})
}

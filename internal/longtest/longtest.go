// Package longtest says whether the long test sweeps run.
//
// `go test ./...` keeps to a few minutes on two cores by sampling the
// exhaustive sweeps (every float32 bit pattern through the float8 codecs,
// the long simulator sweeps). Setting TCRT_LONG_TESTS=1 runs them whole;
// .ci/run does. -short samples more sparsely still.
package longtest

import (
	"os"
	"strconv"
)

// Var is the environment variable that enables the long sweeps.
const Var = "TCRT_LONG_TESTS"

// Enabled reports whether TCRT_LONG_TESTS is set to a true value (1, t,
// true, …; see strconv.ParseBool).
func Enabled() bool {
	on, err := strconv.ParseBool(os.Getenv(Var))
	return err == nil && on
}

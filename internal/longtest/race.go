//go:build race

package longtest

// Race is true in a test binary built with -race. The race step of CI
// checks concurrency, not numerics: long single-threaded sweeps shrink
// under it (the plain test step runs them whole).
const Race = true

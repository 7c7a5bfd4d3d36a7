//go:build !race

package llama_test

// raceBuild is whether the race detector is on (see race_on_test.go).
const raceBuild = false

//go:build race

package llama_test

// raceBuild is whether the race detector is on: its sync.Pool drops items
// at random, so allocation counts are not exact.
const raceBuild = true

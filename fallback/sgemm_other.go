//go:build purego || !amd64

package fallback

// asmVariants is empty without assembly kernels.
func asmVariants() []*variant { return nil }

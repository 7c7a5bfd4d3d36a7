//go:build !explore || !amd64 || purego

package fallback

// exploreVariants is empty without the explore build tag (see sgemm_gen.go).
func exploreVariants() []*variant { return nil }

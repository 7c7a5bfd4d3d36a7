//go:build !linux

package llama

// mapFile reads the whole file: this platform's build has no mapping.
func mapFile(path string) ([]byte, func([]byte) error, bool, error) { return readFile(path) }

// dropPages does nothing without a mapping.
func dropPages([]byte) {}

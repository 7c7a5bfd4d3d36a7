//go:build nocuda

package driver

import "errors"

// DefaultLibrary is the library Load would open.
const DefaultLibrary = "libcuda.so.1"

// Load fails: with -tags nocuda the binary carries no driver loader (and
// no purego), so it links statically and runs on the CPU everywhere.
func Load(path string) (Driver, error) {
	if path == "" {
		path = DefaultLibrary
	}
	return nil, &LoadError{Step: StepLibrary, Path: path, Err: errors.New("this binary was built with -tags nocuda: it loads no CUDA driver")}
}

//go:build unix

package hostmem

import "syscall"

// probe maps n bytes of private anonymous memory and unmaps them at once:
// the mapping counts against the address-space limit exactly as the Go
// heap's growth would, and touches no page.
func probe(n int) error {
	if n <= 0 {
		return syscall.ENOMEM
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return err
	}
	return syscall.Munmap(b)
}

//go:build linux

package llama

import (
	"os"
	"syscall"

	"github.com/tcrt-go/tcrt/tile"
)

// mapFile maps the file at path read-only and shared: its pages come from
// the page cache on first touch, and nothing is copied.
func mapFile(path string) (data []byte, release func([]byte) error, mapped bool, err error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, nil, false, tile.Errorf(tile.ErrArgument, stOp, path, "opening: %v", err)
	}
	defer fd.Close() // the mapping outlives the descriptor
	st, err := fd.Stat()
	if err != nil {
		return nil, nil, false, tile.Errorf(tile.ErrArgument, stOp, path, "stat: %v", err)
	}
	if !st.Mode().IsRegular() {
		return nil, nil, false, tile.Errorf(tile.ErrArgument, stOp, path, "not a regular file")
	}
	size := st.Size()
	if size < 8 || size > int64(maxInt) {
		return nil, nil, false, tile.Errorf(tile.ErrBounds, stOp, path, "a file of %d bytes cannot hold an 8-byte header length and a header", size)
	}
	data, err = syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false, tile.Errorf(tile.ErrArgument, stOp, path, "mmap: %v", err)
	}
	return data, syscall.Munmap, true, nil
}

// dropPages tells the kernel that the bytes b, a subslice of a read-only
// file mapping (never other memory: anonymous pages would be zeroed), will
// not be needed soon, so that their pages leave the
// process's resident set once copied; a later read faults them back in
// from the file. Only whole pages inside b are dropped.
func dropPages(b []byte) {
	pg := os.Getpagesize()
	if len(b) < pg {
		return
	}
	start := uintptrOf(b)
	skip := (pg - int(start%uintptr(pg))) % pg
	n := (len(b) - skip) / pg * pg
	if n <= 0 {
		return
	}
	_ = syscall.Madvise(b[skip:skip+n], syscall.MADV_DONTNEED)
}

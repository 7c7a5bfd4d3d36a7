package hostmem

import (
	"errors"
	"math"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

func TestBytes(t *testing.T) {
	b, err := Bytes(100, 112, 0)
	if err != nil || len(b) != 100 || cap(b) != 112 {
		t.Fatalf("Bytes(100, 112): len %d cap %d, %v", len(b), cap(b), err)
	}
	for i, v := range b[:cap(b)] {
		if v != 0 {
			t.Fatalf("byte %d is %#x", i, v)
		}
	}
	for _, c := range []struct {
		n, c  int
		limit int64
	}{{-1, 0, 0}, {10, 5, 0}, {1 << 30, 1 << 30, 1 << 20}, {math.MaxInt - 1, math.MaxInt - 1, 0}, {1 << 50, 1 << 50, 0}} {
		if _, err := Bytes(c.n, c.c, c.limit); !errors.Is(err, tile.ErrOutOfMemory) {
			t.Errorf("Bytes(%d, %d, limit %d): %v; want ErrOutOfMemory", c.n, c.c, c.limit, err)
		}
	}
}

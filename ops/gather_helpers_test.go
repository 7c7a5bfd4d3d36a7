package ops_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// openForced opens a runtime on the tests' backend (testOptions) with the
// named kernel forced (on a GPU, a CPU kernel's host fallback).
func openForced(t testing.TB, kernel string) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.Open(testOptions(runtime.Options{Kernel: kernel}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// bufWith allocates a buffer of d and shape holding raw.
func bufWith(t testing.TB, rt *runtime.Runtime, d tile.DType, raw []byte, shape ...int) *runtime.Buffer {
	t.Helper()
	b, err := rt.Alloc(d, shape...)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != b.Bytes() {
		t.Fatalf("bufWith: %d bytes for a %d-byte buffer", len(raw), b.Bytes())
	}
	if err := b.Write(context.Background(), 0, raw); err != nil {
		t.Fatal(err)
	}
	return b
}

// bytesOf reads a buffer's bytes.
func bytesOf(t testing.TB, b *runtime.Buffer) []byte {
	t.Helper()
	raw := make([]byte, b.Bytes())
	if err := b.Read(context.Background(), 0, raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// tileWith stores raw (the physical tile) in a new buffer of rt.
func tileWith(t testing.TB, rt *runtime.Runtime, desc tile.Tile, raw []byte) ops.Tile {
	t.Helper()
	return ops.TileOf(bufWith(t, rt, desc.DType, raw, desc.Resolved().Elements()), desc)
}

// putIdx writes index v at valid coordinate (r, c) of an index tile's
// physical bytes.
func putIdx(raw []byte, desc tile.Tile, r, c int, v int64) {
	desc = desc.Resolved()
	i := desc.At(r, c)
	if desc.DType.Size() == 4 {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
	} else {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
}

// pad4 returns one of the five pad kinds for i.
func padFor(i int, d tile.DType) tile.Pad {
	switch i % 5 {
	case 1:
		return tile.PadZeroValue
	case 2:
		return tile.PadMaxValue
	case 3:
		return tile.PadMinValue
	case 4:
		return tile.PadValue(0xa5a5a5a5a5a5a5a5 >> (64 - d.Bits()))
	}
	return tile.PadNullValue
}

// snapshot records the bytes of buffers so a test can check that a faulting
// call changed none of them.
type snapshot struct {
	bufs []*runtime.Buffer
	data [][]byte
}

func snap(t testing.TB, bufs ...*runtime.Buffer) *snapshot {
	s := &snapshot{}
	for _, b := range bufs {
		if b == nil || b.Closed() {
			continue
		}
		s.bufs = append(s.bufs, b)
		s.data = append(s.data, bytesOf(t, b))
	}
	return s
}

func (s *snapshot) unchanged(t testing.TB, what string) {
	t.Helper()
	for i, b := range s.bufs {
		if !bytes.Equal(bytesOf(t, b), s.data[i]) {
			t.Errorf("%s: buffer %d changed by a faulting call", what, i)
		}
	}
}

// wantFault checks err wraps every sentinel and names arg.
func wantFault(t testing.TB, what string, err error, arg string, sentinels ...error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			t.Errorf("%s: error %q does not wrap %q", what, err, s)
		}
	}
	if !strings.Contains(err.Error(), "argument "+arg) {
		t.Errorf("%s: error %q does not name argument %s", what, err, arg)
	}
}

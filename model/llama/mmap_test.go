package llama

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"
)

// TestMapFileDropPages: a mapped file reads back its bytes, and still does
// after its pages are dropped (they fault back in from the file); the
// plain-read path (other platforms) reads the same bytes, and release
// leaves its memory alone.
func TestMapFileDropPages(t *testing.T) {
	want := make([]byte, 3*os.Getpagesize()+1234)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	p := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func(string) ([]byte, func([]byte) error, bool, error){"map": mapFile, "read": readFile} {
		data, release, mapped, err := open(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) {
			t.Fatalf("%s: bytes differ", name)
		}
		if name == "map" && goruntime.GOOS == "linux" && !mapped {
			t.Fatal("linux: the file was not mapped")
		}
		f := &File{data: data, mapped: mapped}
		f.release(data[100 : len(data)-100])
		f.release(data[:10])
		f.release(want) // not in the file: ignored
		if !bytes.Equal(data, want) {
			t.Fatalf("%s: bytes differ after dropPages", name)
		}
		if err := release(data); err != nil {
			t.Fatal(err)
		}
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxQuickstartBytes bounds the CPU-only quickstart binary (default build,
// no -ldflags; 24.8 MiB when the kernel generators moved out). Most of it
// is the GPU kernels' embedded cubins (about 14 MB), which a binary that
// serves GPU hosts must carry; the rest is the runtime, the CPU kernels and
// the SASS model the simulator uses. No generator is linked
// (internal/doccheck's TestLibrariesLinkNoGenerators).
const maxQuickstartBytes = 26 << 20

// TestQuickstartBinarySize fails when the quickstart binary grows past
// maxQuickstartBytes (something large got linked in).
func TestQuickstartBinarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	out := filepath.Join(t.TempDir(), "quickstart")
	cmd := exec.Command("go", "build", "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quickstart binary: %.1f MiB (limit %.1f MiB)", float64(fi.Size())/(1<<20), float64(maxQuickstartBytes)/(1<<20))
	if fi.Size() > maxQuickstartBytes {
		t.Fatalf("the quickstart binary is %d bytes, over the %d-byte limit", fi.Size(), maxQuickstartBytes)
	}
}

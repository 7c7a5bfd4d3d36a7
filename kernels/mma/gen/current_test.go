package gen

import (
	"bytes"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/mma"
)

// TestPTXCurrent checks the embedded PTX is what the generator writes
// today (go generate ./kernels/mma refreshes it).
func TestPTXCurrent(t *testing.T) {
	if !bytes.Equal(ModulePTX(), mma.Module().PTX) {
		t.Fatal("mma.ptx is stale: run go generate ./kernels/mma")
	}
}

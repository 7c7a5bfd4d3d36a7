package llamatest_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/tile"
)

// TestConfigsValid: the named configurations validate and survive
// config.json; Llama1B has Llama 3.2 1B's parameter count.
func TestConfigsValid(t *testing.T) {
	for name, c := range map[string]llama.Config{"tiny": llamatest.Tiny(), "small": llamatest.Small(), "1b": llamatest.Llama1B()} {
		js, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := llama.ParseConfig(js)
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	if n := llamatest.Llama1B().NumParams(); n != 1235814400 {
		t.Errorf("Llama1B has %d parameters", n)
	}
	if _, err := llamatest.RandomWeights(llamatest.Llama1B(), 1); err == nil {
		t.Error("RandomWeights held a 1B model in memory")
	}
}

// TestWriteRandomCheckpointErrors: bad arguments are refused before
// anything is written.
func TestWriteRandomCheckpointErrors(t *testing.T) {
	dir := t.TempDir() + "/ck"
	bad := llamatest.Tiny()
	bad.NumKVHeads = 3
	for name, err := range map[string]error{
		"dtype":  llamatest.WriteRandomCheckpoint(dir, llamatest.Tiny(), tile.E4M3, 1, nil),
		"config": llamatest.WriteRandomCheckpoint(dir, bad, tile.F32, 1, nil),
		"shards": llamatest.WriteRandomCheckpoint(dir, llamatest.Tiny(), tile.F32, 1, &llamatest.Options{Shards: 1000}),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the directory was created")
	}
}

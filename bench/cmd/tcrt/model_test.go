package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/tile"
)

// TestModelCommands runs `tcrt generate` and `tcrt bench-model` on a
// generated tiny checkpoint: generate's first line is the reference's
// greedy continuation; bench-model prints a line per batch size.
func TestModelCommands(t *testing.T) {
	dir := t.TempDir()
	cfg := llamatest.Tiny()
	if err := llamatest.WriteRandomCheckpoint(dir, cfg, tile.BF16, 3, nil); err != nil {
		t.Fatal(err)
	}
	ck, err := llama.OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := llamatest.NewReference(ck)
	ck.Close()
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Greedy(context.Background(), []int{1, 2, 3}, 12)
	if err != nil {
		t.Fatal(err)
	}
	var wantS []string
	for _, v := range want {
		wantS = append(wantS, strconv.Itoa(v))
	}
	var out, errOut bytes.Buffer
	if rc := generateCmd([]string{"-model", dir, "-tokens", "1,2,3", "-n", "12", "-ignore-eos"}, &out, &errOut); rc != 0 {
		t.Fatalf("generate: status %d: %s", rc, errOut.String())
	}
	if got := strings.SplitN(out.String(), "\n", 2)[0]; got != strings.Join(wantS, ",") {
		t.Errorf("generate printed %q, reference %q", got, strings.Join(wantS, ","))
	}
	if !strings.Contains(errOut.String(), "tokens/s") {
		t.Errorf("generate's stderr has no tokens/s: %q", errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if rc := generateCmd([]string{"-model", dir, "-tokens", "4,5", "-n", "5", "-temperature", "0.8", "-top-k", "20", "-top-p", "0.9", "-seed", "7"}, &out, &errOut); rc != 0 {
		t.Fatalf("sampled generate: status %d: %s", rc, errOut.String())
	}
	if ids := strings.Split(strings.SplitN(out.String(), "\n", 2)[0], ","); len(ids) == 0 || len(ids) > 5 {
		t.Errorf("sampled generate printed %q", out.String())
	}
	for _, bad := range [][]string{{"-tokens", "1"}, {"-model", dir}, {"-model", dir, "-tokens", "a,b"}, {"-model", dir, "-tokens", "1", "-n", "0"}, {"-model", dir, "-tokens", "1", "-dtype", "f8"}} {
		if rc := generateCmd(bad, &out, &errOut); rc != 2 {
			t.Errorf("generate %q: status %d, want 2", bad, rc)
		}
	}
	if rc := generateCmd([]string{"-model", dir, "-tokens", "1000"}, &out, &errOut); rc != 1 {
		t.Errorf("generate with a token past the vocabulary: status %d, want 1", rc)
	}

	out.Reset()
	errOut.Reset()
	if rc := benchModelCmd([]string{"-model", dir, "-batches", "1,3", "-prompt", "5", "-steps", "3", "-dtype", "f32"}, &out, &errOut); rc != 0 {
		t.Fatalf("bench-model: status %d: %s", rc, errOut.String())
	}
	for _, b := range []string{"batch 1: prefill ", "batch 3: prefill "} {
		if !strings.Contains(out.String(), b) {
			t.Errorf("bench-model output lacks %q:\n%s", b, out.String())
		}
	}
	out.Reset()
	if rc := generateCmd([]string{"-model", dir, "-tokens", "1,2", "-n", "3", "-ignore-eos", "-float8"}, &out, &errOut); rc != 0 || strings.Count(strings.SplitN(out.String(), "\n", 2)[0], ",") != 2 {
		t.Errorf("generate -float8: status %d, output %q: %s", rc, out.String(), errOut.String())
	}
	if rc := benchModelCmd([]string{"-model", dir, "-batches", "0"}, &out, &errOut); rc != 2 {
		t.Errorf("bench-model -batches 0: status %d, want 2", rc)
	}
}

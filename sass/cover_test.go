package sass

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// formName names a form for test messages.
func formName(f *form) string {
	var ops []string
	for _, o := range f.ops {
		ops = append(ops, fmt.Sprintf("%d@%d", o.kind, o.pos))
	}
	return fmt.Sprintf("%s/%03x(%s)", f.op, f.val.get(0, 12), strings.Join(ops, ","))
}

// whichForm returns the form the decoder used for word b.
func whichForm(b []byte) *form {
	i, err := DecodeWord(b)
	if err != nil {
		return nil
	}
	f, _, err := i.findForm()
	if err != nil {
		return nil
	}
	return f
}

func TestEveryFormHasGoldenWord(t *testing.T) {
	seen := map[*form]bool{}
	corpus, err := filepath.Glob("testdata/ptxas/golden/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	nvcc, err := filepath.Glob("testdata/nvcc/golden/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	corpus = append(corpus, nvcc...)
	for _, path := range append([]string{"testdata/golden_sm86.txt", "testdata/golden_sm89.txt", "testdata/golden_mma_sm86.txt"}, corpus...) {
		for _, g := range readGolden(t, path) {
			if f := whichForm(g.w[:]); f != nil {
				seen[f] = true
			}
		}
	}
	n := 0
	ensureTables()
	for _, fs := range formsByOp {
		for _, f := range fs {
			n++
			if !seen[f] {
				t.Errorf("form %s has no golden word", formName(f))
			}
		}
	}
	t.Logf("%d forms, %d with golden words", n, len(seen))
}

package sass

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// A corpus's inputs.sum records, by SHA-256, what its last build
// (gen.sh, -update-corpus) read and wrote: each tool's --version text,
// each compilation's arguments and input files, each cubin and each golden
// file. TestCorpusCurrent and TestNVCCCorpusCurrent compare it with the
// files of today, which costs one --version run per tool; where nothing
// differs, rebuilding would remake the same cubins and golden text (ptxas,
// nvcc and nvdisasm are deterministic), so they rebuild and compare only
// under -sass.rebuild-corpus or CI=true, where the record is checked too.

var rebuildCorpus = flag.Bool("sass.rebuild-corpus", false,
	"TestCorpusCurrent, TestNVCCCorpusCurrent: rebuild the corpus with the tools and compare, even where inputs.sum matches (always under CI=true)")

// corpusRebuild reports whether a staleness test rebuilds its corpus.
func corpusRebuild() bool {
	return *updateCorpus || *rebuildCorpus || os.Getenv("CI") == "true"
}

// corpusBuild is one compilation of a corpus, as recorded: its arguments
// without the output path and without host-dependent flags (the host
// compiler nvcc is told to use), the files it reads, the cubin it writes.
type corpusBuild struct {
	args   []string
	inputs []string
	cubin  string
}

// repoRel names a file by its path in the repository.
func repoRel(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.Rel(corpus.Repo(), p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// fileSum is a file's SHA-256 in hex, or "missing".
func fileSum(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// corpusSum returns the inputs.sum text of a corpus: tools by name and
// path, its builds, and the cubins whose golden files it holds.
func corpusSum(t *testing.T, tools [][2]string, builds []corpusBuild, cubins []corpus.Cubin) []byte {
	var lines []string
	for _, tl := range tools {
		v := cudatools.Run(t, tl[1], "--version")
		lines = append(lines, fmt.Sprintf("tool %s %x", tl[0], sha256.Sum256([]byte(v))))
	}
	for _, b := range builds {
		h := sha256.New()
		for _, a := range b.args {
			// paths inside the repository as repository-relative, so the
			// record holds in any clone (an -I of the shim directory)
			a = strings.ReplaceAll(a, corpus.Repo()+string(filepath.Separator), "")
			fmt.Fprintf(h, "%d:%s\n", len(a), a)
		}
		for _, f := range b.inputs {
			fmt.Fprintf(h, "%s %s\n", repoRel(f), fileSum(f))
		}
		lines = append(lines, fmt.Sprintf("build %s %x", repoRel(b.cubin), h.Sum(nil)))
	}
	for _, c := range cubins {
		lines = append(lines, fmt.Sprintf("cubin %s %s", repoRel(c.Path), fileSum(c.Path)))
		lines = append(lines, fmt.Sprintf("golden %s %s", repoRel(c.Golden), fileSum(c.Golden)))
	}
	sort.Strings(lines)
	for _, l := range lines {
		if strings.Contains(l, corpus.Repo()) {
			t.Fatalf("inputs.sum line %q names this clone's directory", l)
		}
	}
	return []byte("# SHA-256 of what the last build of this corpus read and wrote (sass/corpussum_test.go). DO NOT EDIT: gen.sh rewrites it.\n" +
		strings.Join(lines, "\n") + "\n")
}

// checkCorpusSum fails the test, naming the first entries that differ,
// where the recorded sum file is not got.
func checkCorpusSum(t *testing.T, path string, got []byte, gen string) {
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run %s", err, gen)
	}
	if diff := corpusSumDiff(want, got); len(diff) > 0 {
		t.Errorf("%s is stale (changed since the recorded build: %s): run %s", repoRel(path), strings.Join(diff[:min(len(diff), 8)], ", "), gen)
	}
}

// corpusSumDiff names the entries (kind and file) of got that want does
// not hold, or says that one is gone; nil where they are equal.
func corpusSumDiff(want, got []byte) []string {
	if bytes.Equal(got, want) {
		return nil
	}
	old := map[string]bool{}
	for _, l := range strings.Split(string(want), "\n") {
		old[l] = true
	}
	var diff []string
	for _, l := range strings.Split(string(got), "\n") {
		if f := strings.Fields(l); !old[l] && len(f) >= 2 {
			diff = append(diff, f[0]+" "+f[1])
		}
	}
	if len(diff) == 0 {
		diff = []string{"an entry is gone"}
	}
	return diff
}

// TestCorpusSum checks that the record changes with every input of a
// build (its arguments, each input file), with a cubin and with a golden
// file, and with nothing else.
func TestCorpusSum(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	src, inc := file("a.cu", "kernel"), file("b.h", "header")
	c := corpus.Cubin{Path: file("a.cubin", "code"), Golden: file("a.txt", "text")}
	b := corpusBuild{args: []string{"-arch=sm_86", "-O3"}, inputs: []string{src, inc}, cubin: c.Path}
	sum := func() []byte { return corpusSum(t, nil, []corpusBuild{b}, []corpus.Cubin{c}) }
	base := sum()
	if d := corpusSumDiff(base, sum()); d != nil {
		t.Fatalf("unchanged files differ: %v", d)
	}
	for _, step := range []struct {
		change func()
		kind   string
	}{
		{func() { file("a.cu", "kernel2") }, "build"},
		{func() { file("b.h", "header2") }, "build"},
		{func() { b.args = []string{"-arch=sm_89", "-O3"} }, "build"},
		{func() { b.args = []string{"-arch=sm_86", "-O", "3"} }, "build"},
		{func() { file("a.cubin", "code2") }, "cubin"},
		{func() { file("a.txt", "text2") }, "golden"},
		{func() { os.Remove(c.Golden) }, "golden"},
	} {
		step.change()
		d := corpusSumDiff(base, sum())
		if len(d) != 1 || !strings.HasPrefix(d[0], step.kind+" ") {
			t.Errorf("after a change to the %s: diff %v", step.kind, d)
		}
		base = sum()
	}
}

// treeFiles lists the files under dir, in order.
func treeFiles(t *testing.T, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

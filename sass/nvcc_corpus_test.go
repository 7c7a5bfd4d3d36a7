package sass

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The nvcc corpus (testdata/nvcc): CUDA C++ kernels written the way
// real-world code is (shuffle and cooperative-groups reductions, softmax,
// layernorm, divisions, atomics, spills, device calls, __constant__ data,
// cp.async, WMMA and mma.sync), compiled by nvcc 11.8 for sm_86 and sm_89.
// Unlike the ptxas corpus it has no baseline: every word must be modelled.

// nvccFlagsRE finds a source's extra nvcc flags: a line "// nvcc-flags: ...".
var nvccFlagsRE = regexp.MustCompile(`(?m)^// nvcc-flags: (.*)$`)

// nvccArgs returns nvcc's arguments that compile src for sm_<sm> into
// out, run in nvccBuildDir (the source, the shim and the output by
// relative names: nvcc writes the source's path into assert messages, and
// the working directory, the output's path and the sources' modification
// times into -G builds' debug information, so a build is the same bytes
// from any clone only then).
func nvccArgs(t testing.TB, src string, sm int, out string) []string {
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	args := append(cudatools.NVCCHostFlags(), "--expt-relaxed-constexpr", "-Ishim",
		"-cubin", fmt.Sprintf("-arch=sm_%d", sm), "-O3")
	if m := nvccFlagsRE.FindSubmatch(b); m != nil {
		args = append(args, strings.Fields(string(m[1]))...)
	}
	return append(args, "-o", out, filepath.Base(src))
}

// nvccSourceTime is the modification time the corpus builds see on every
// source.
var nvccSourceTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// nvccBuildDir copies the nvcc corpus's sources and shim into one fixed
// directory, the same path on every machine and clone, and returns it: the
// working directory of every corpus build (see nvccArgs).
func nvccBuildDir(t testing.TB, srcs, shim []string) string {
	dir := filepath.Join(os.TempDir(), "tcrt-nvcc-corpus")
	for _, f := range append(append([]string(nil), srcs...), shim...) {
		rel, err := filepath.Rel(corpus.NVCCDir, f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, rel), b, 0o644)
		}
		if err == nil {
			// -G builds record each source's modification time too.
			err = os.Chtimes(filepath.Join(dir, rel), nvccSourceTime, nvccSourceTime)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestNVCCCorpusCurrent checks (or, with -update-corpus, rewrites) that the
// nvcc corpus cubins are what nvcc makes from the sources today and that
// the golden text is what nvdisasm prints. It needs nvcc and nvdisasm
// (skipped without them, failed under CI=true). It rebuilds (an nvcc run
// per source and arch) only under -update-corpus, -sass.rebuild-corpus or
// CI=true; otherwise it compares inputs.sum with today's files
// (corpussum_test.go). -short skips it.
func TestNVCCCorpusCurrent(t *testing.T) {
	if testing.Short() && !*updateCorpus {
		t.Skip("-short: the nvcc corpus is not rebuilt")
	}
	nvcc := cudatools.Require(t, "nvcc")
	nvdisasm := cudatools.Require(t, "nvdisasm")
	srcs, err := filepath.Glob(filepath.Join(corpus.NVCCDir, "*.cu"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no nvcc corpus sources (%v)", err)
	}
	// every source may include any shim header
	shim := treeFiles(t, filepath.Join(corpus.NVCCDir, "shim"))
	host := len(cudatools.NVCCHostFlags())
	var builds []corpusBuild
	for _, src := range srcs {
		for _, sm := range corpus.Archs {
			name := strings.TrimSuffix(filepath.Base(src), ".cu")
			args := nvccArgs(t, src, sm, "OUT")
			for k, a := range args {
				if a == src {
					args[k] = repoRel(src)
				}
			}
			builds = append(builds, corpusBuild{
				args:   args[host:],
				inputs: append([]string{src}, shim...),
				cubin:  filepath.Join(corpus.NVCCDir, "cubin", fmt.Sprintf("%s.sm_%d.cubin", name, sm)),
			})
		}
	}
	tools := [][2]string{{"nvcc", nvcc}, {"nvdisasm", nvdisasm}}
	sumFile := filepath.Join(corpus.NVCCDir, "inputs.sum")
	const gen = "sass/testdata/nvcc/gen.sh"
	if !corpusRebuild() {
		checkCorpusSum(t, sumFile, corpusSum(t, tools, builds, corpus.NVCCCubins(t)), gen)
		return
	}
	buildDir := nvccBuildDir(t, srcs, shim)
	if *updateCorpus {
		for _, d := range []string{"cubin", "golden"} {
			old, _ := filepath.Glob(filepath.Join(corpus.NVCCDir, d, "*"))
			for _, f := range old {
				os.Remove(f)
			}
			if err := os.MkdirAll(filepath.Join(corpus.NVCCDir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, b := range builds {
		src := b.inputs[0]
		// The output too by a fixed relative name: -G builds record it.
		const out = "out.cubin"
		// nvcc's stderr carries ptxas's advice (an ignored
		// .minnctapersm): expected, so not an error here.
		sm := 86
		if strings.HasSuffix(b.cubin, ".sm_89.cubin") {
			sm = 89
		}
		cmd := exec.Command(nvcc, nvccArgs(t, src, sm, out)...)
		cmd.Dir = buildDir
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nvcc %s: %v\n%s", src, err, msg)
		}
		got, err1 := os.ReadFile(filepath.Join(buildDir, out))
		if *updateCorpus {
			if err1 == nil {
				err1 = os.WriteFile(b.cubin, got, 0o644)
			}
			if err1 != nil {
				t.Fatal(err1)
			}
			continue
		}
		want, err2 := os.ReadFile(b.cubin)
		if err1 != nil || err2 != nil {
			t.Fatalf("%v %v", err1, err2)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run %s", b.cubin, gen)
		}
	}
	for _, c := range corpus.NVCCCubins(t) {
		got := goldenText(t, nvdisasm, c.Path)
		got = bytes.Replace(got, []byte("sass/testdata/ptxas/gen.sh"), []byte(gen), 1)
		if *updateCorpus {
			if err := os.WriteFile(c.Golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(c.Golden)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run %s", c.Golden, gen)
		}
	}
	sum := corpusSum(t, tools, builds, corpus.NVCCCubins(t))
	if *updateCorpus {
		if err := os.WriteFile(sumFile, sum, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	checkCorpusSum(t, sumFile, sum, gen)
}

// hiddenRE matches what a listing shows and nvdisasm's text cannot: a
// hidden memory descriptor, a NaN immediate's bits and a hidden modifier.
var hiddenRE = regexp.MustCompile(`hdesc\[|\b0f[0-9A-Fa-f]{8}\b|\._[A-Z]`)

// TestNVCCCorpusCoverage requires of every word of the nvcc corpus that it
// decodes, re-encodes to the same 128 bits, prints exactly as nvdisasm
// printed it (the golden text), that its listing parses back to the word,
// and that nvdisasm's own text parses back to it (with the control word,
// which the text does not show, taken from the decoded word).
func TestNVCCCorpusCoverage(t *testing.T) {
	cubins := corpus.NVCCCubins(t)
	if len(cubins) < 12 {
		t.Fatalf("%d nvcc corpus cubins, want >= 12", len(cubins))
	}
	rejected := map[string][]string{}
	words, fails := 0, 0
	fail := func(key, msg string) {
		fails++
		if len(rejected[key]) < 2 {
			rejected[key] = append(rejected[key], msg)
		}
	}
	for _, cb := range cubins {
		name := filepath.Base(cb.Golden)
		arch := 86
		if strings.Contains(name, ".sm_89.") {
			arch = 89
		}
		for _, g := range readGolden(t, cb.Golden) {
			words++
			op, _ := mnemonicOf(g.text)
			where := fmt.Sprintf("%s:%d: %s", name, g.line, g.text)
			i, err := DecodeWord(g.w[:])
			if err != nil {
				fail("decode "+op, fmt.Sprintf("%s\n\t%v\n\t%s", where, err, explain(g.w[:])))
				continue
			}
			if b, err := i.Word(); err != nil || b != g.w {
				fail("re-encode "+op, fmt.Sprintf("%s: re-encodes to %x (%v)", where, b, err))
				continue
			}
			if got := i.TextArch(arch, g.addr); got != g.text {
				fail("print "+op, fmt.Sprintf("%s\n\tgot %s", where, got))
				continue
			}
			l := i.Listing(g.addr)
			if p, err := ParseInst(l, g.addr); err != nil {
				fail("parse listing "+op, fmt.Sprintf("%s: %q: %v", where, l, err))
				continue
			} else if b, err := p.Word(); err != nil || b != g.w {
				fail("parse listing "+op, fmt.Sprintf("%s: %q re-encodes to %x (%v)", where, l, b, err))
				continue
			}
			p, err := ParseInst(g.text, g.addr)
			if err != nil {
				fail("parse text "+op, fmt.Sprintf("%s: %v", where, err))
				continue
			}
			p.Ctrl = i.Ctrl
			if b, err := p.Word(); (err != nil || b != g.w) && !hiddenRE.MatchString(l) {
				fail("parse text "+op, fmt.Sprintf("%s: re-encodes to %x (%v), want %x", where, b, err, g.w))
			}
		}
	}
	var keys []string
	for k := range rejected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "\n%s:\n  %s", k, strings.Join(rejected[k], "\n  "))
	}
	t.Logf("%d cubins, %d words, %d failures", len(cubins), words, fails)
	if fails > 0 {
		t.Errorf("%d of %d nvcc corpus words fail:%s", fails, words, sb.String())
	}
}

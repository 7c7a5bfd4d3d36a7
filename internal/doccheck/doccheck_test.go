// Package doccheck holds tests over the repository's documentation: every
// repository path a document names must exist.
package doccheck

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository root, two folders above this package.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", r, err)
	}
	return r
}

// docs are the Markdown files checked: the top level and docs/.
func docs(t *testing.T, r string) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.md", "docs/*.md"} {
		m, err := filepath.Glob(filepath.Join(r, pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no Markdown files found")
	}
	return out
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	linkDest = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	goSymbol = regexp.MustCompile(`\.[A-Z]`)
)

// candidates returns the words of a document that name repository paths:
// code spans and relative link targets whose first element is a top-level
// entry of the repository (module import paths have the module prefix
// removed). Words with patterns or placeholders (*, <, {, …, $) are skipped.
func candidates(text string, top map[string]bool) []string {
	var words []string
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		words = append(words, strings.Fields(m[1])...)
	}
	for _, m := range linkDest.FindAllStringSubmatch(text, -1) {
		if !strings.Contains(m[1], "://") && !strings.HasPrefix(m[1], "#") {
			words = append(words, m[1])
		}
	}
	var out []string
	for _, w := range words {
		w = strings.TrimPrefix(w, "github.com/tcrt-go/tcrt/")
		w = strings.TrimPrefix(w, "./")
		w = strings.TrimRight(w, ".,;:)")
		if i := strings.IndexAny(w, "#"); i >= 0 {
			w = w[:i]
		}
		if i := strings.Index(w, ":"); i > 0 { // file.go:123
			w = w[:i]
		}
		if m := goSymbol.FindStringIndex(w); m != nil { // kernels/ptx.Module
			w = w[:m[0]]
		}
		if w == "" || strings.ContainsAny(w, "*<>{}$…|=()[]'\"") || strings.Contains(w, "...") {
			continue
		}
		first, _, _ := strings.Cut(w, "/")
		if !strings.Contains(w, "/") || !top[first] {
			continue
		}
		out = append(out, w)
	}
	return out
}

// TestDocPathsExist fails when a document names a repository path that
// does not exist (a moved file, a renamed package).
func TestDocPathsExist(t *testing.T) {
	r := root(t)
	entries, err := os.ReadDir(r)
	if err != nil {
		t.Fatal(err)
	}
	top := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			top[e.Name()] = true
		}
	}
	checked := 0
	for _, doc := range docs(t, r) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(r, doc)
		base := filepath.Dir(doc)
		for _, p := range candidates(string(b), top) {
			checked++
			if _, err := os.Stat(filepath.Join(r, p)); err == nil {
				continue
			}
			// A link may be relative to the document's folder.
			if _, err := os.Stat(filepath.Join(base, p)); err == nil {
				continue
			}
			t.Errorf("%s names %q, which does not exist", rel, p)
		}
	}
	if checked == 0 {
		t.Fatal("no paths found in any document: the extractor is broken")
	}
}

func TestCandidates(t *testing.T) {
	top := map[string]bool{"runtime": true, "docs": true}
	got := candidates("see `runtime/cuda_f8.go:12`, [x](docs/a.md#b), `ops.MatMul`, `runtime/*.go`, `runtime/backend.Kind`, [w](https://x/y), `github.com/tcrt-go/tcrt/runtime/sim`", top)
	want := []string{"runtime/cuda_f8.go", "runtime/backend", "runtime/sim", "docs/a.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("candidates = %q, want %q", got, want)
	}
}

// TestREADMEIsAGuide keeps the README a user's guide: at most 150 lines,
// none over 400 characters (measurement history goes to docs/performance.md).
func TestREADMEIsAGuide(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 150 {
		t.Errorf("README.md has %d lines; keep it to 150", len(lines))
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > 400 {
			t.Errorf("README.md:%d is %d characters long", i+1, n)
		}
	}
	for _, want := range []string{"go get github.com/tcrt-go/tcrt", "<!-- begin examples/quickstart/main.go -->"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}

// layers reads ARCHITECTURE.md's dependency layers: the numbered lines
// between <!-- layers --> and <!-- end layers -->, each a list of package
// patterns in code spans (path.Match patterns relative to the module).
func layers(t *testing.T, r string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- layers -->")
	block, _, ok2 := strings.Cut(rest, "<!-- end layers -->")
	if !ok || !ok2 {
		t.Fatal("ARCHITECTURE.md has no <!-- layers --> block")
	}
	var out [][]string
	for _, line := range strings.Split(block, "\n") {
		if !regexp.MustCompile(`^\d+\. `).MatchString(line) {
			continue
		}
		var pats []string
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			pats = append(pats, m[1])
		}
		out = append(out, pats)
	}
	if len(out) < 2 {
		t.Fatalf("ARCHITECTURE.md's layers block has %d layers", len(out))
	}
	return out
}

// TestDependencyLayers checks every package's imports (not its tests')
// against ARCHITECTURE.md's layers: only lower layers may be imported.
func TestDependencyLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	r := root(t)
	ls := layers(t, r)
	const mod = "github.com/tcrt-go/tcrt"
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = r
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	layerOf := func(pkg string) int {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, mod), "/")
		for i, pats := range ls {
			for _, p := range pats {
				if ok, _ := path.Match(p, rel); ok {
					return i
				}
			}
		}
		return -1
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := f[0]
		lp := layerOf(pkg)
		if lp < 0 {
			t.Errorf("%s is in no layer of ARCHITECTURE.md", pkg)
			continue
		}
		n++
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, mod+"/") {
				continue
			}
			li := layerOf(imp)
			if li < 0 {
				t.Errorf("%s imports %s, which is in no layer", pkg, imp)
			} else if li >= lp {
				t.Errorf("%s (layer %d) imports %s (layer %d): only lower layers may be imported", pkg, lp+1, imp, li+1)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d packages checked", n)
	}
}

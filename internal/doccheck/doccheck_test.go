// Package doccheck holds tests over the repository's documentation: every
// repository path a document names must exist.
package doccheck

import (
	"os"
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

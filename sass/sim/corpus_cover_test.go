package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// TestSimCorpusCovered fails when a kernel of the ptxas corpus
// (testdata/ptxas/*.ptx, every .entry) has no simulator test against a Go
// reference: a call in this package's tests that loads it by name for
// both SMs (corpusKernel, corpusKernelOrSkip or launchCorpus, whose
// callers run under corpus.ForSMs). The calls are found by parsing the
// test sources, so a kernel counts as covered only where a test runs it.
func TestSimCorpusCovered(t *testing.T) {
	loaders := []string{"corpusKernel", "corpusKernelOrSkip", "launchCorpus"}
	covered := map[string]bool{}
	tests, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range tests {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) < 3 {
				return true
			}
			if id, ok := c.Fun.(*ast.Ident); !ok || !slices.Contains(loaders, id.Name) {
				return true
			}
			var s [2]string
			for k := range s {
				lit, ok := c.Args[k+1].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s[k], _ = strconv.Unquote(lit.Value)
			}
			covered[s[0]+"/"+s[1]] = true
			return true
		})
	}
	sources, err := filepath.Glob(filepath.Join(corpus.Dir, "*.ptx"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no corpus sources in %s (%v)", corpus.Dir, err)
	}
	entry := regexp.MustCompile(`\.entry\s+([A-Za-z_][A-Za-z0-9_$]*)`)
	kernels := 0
	for _, src := range sources {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		file := strings.TrimSuffix(filepath.Base(src), ".ptx")
		for _, m := range entry.FindAllStringSubmatch(string(b), -1) {
			kernels++
			if !covered[file+"/"+m[1]] {
				t.Errorf("corpus kernel %s (%s) has no simulator test against a Go reference", m[1], src)
			}
		}
	}
	if kernels < 30 {
		t.Fatalf("found %d corpus kernels, want at least 30", kernels)
	}
	t.Logf("%d corpus kernels, %d loaded by simulator tests", kernels, len(covered))
}

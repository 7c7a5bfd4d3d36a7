package doccheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibrariesLinkNoGenerators: what a program links through runtime,
// ops and the quickstart holds no kernel generator (kernels/*/gen), no
// kernel-authoring kit (kernels/internal/...) and no scheduling tools
// (sass/sched): those serve go generate and the tests only
// (ARCHITECTURE.md, "Generators").
func TestLibrariesLinkNoGenerators(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-deps", "./runtime", "./ops", "./examples/quickstart")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/tcrt-go/tcrt/"
	n := 0
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, mod)
		if !ok {
			continue
		}
		n++
		if forbiddenInLibrary(rel) {
			t.Errorf("a library binary links %s", pkg)
		}
	}
	if n < 10 {
		t.Fatalf("go list -deps named only %d packages of the module", n)
	}
}

// forbiddenInLibrary reports whether the module package rel (a path below
// the module) is generation code.
func forbiddenInLibrary(rel string) bool {
	switch {
	case rel == "sass/sched" || strings.HasPrefix(rel, "sass/sched/"):
		return true
	case strings.HasPrefix(rel, "kernels/internal/"):
		return true
	case strings.HasPrefix(rel, "kernels/") && (strings.HasSuffix(rel, "/gen") || strings.Contains(rel, "/gen/")):
		return true
	}
	return false
}

// TestForbiddenInLibrary: the rule above on the paths it is about.
func TestForbiddenInLibrary(t *testing.T) {
	for rel, want := range map[string]bool{
		"sass/sched": true, "kernels/sm86mm/gen": true, "kernels/mma/gen": true,
		"kernels/internal/sasskit": true, "kernels/sm86/gen/x": true,
		"sass": false, "sass/cubin": false, "kernels/sm86mm": false, "kernels/ptx": false,
		"runtime": false, "kernels/general": false,
	} {
		if got := forbiddenInLibrary(rel); got != want {
			t.Errorf("forbiddenInLibrary(%q) = %v, want %v", rel, got, want)
		}
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestCPUStartupCost builds this program and checks, with
// GODEBUG=inittrace=1, that the module's packages allocate less than 100 KB
// at start-up in a program that only opens the CPU backend (the SASS tables
// are built on first use).
func TestCPUStartupCost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "cpuinit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "TCRT_BACKEND=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	re := regexp.MustCompile(`init (github\.com/tcrt-go/tcrt\S*) @\S+ \S+, \S+ ms clock, (\d+) bytes`)
	total := 0
	for _, m := range re.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		total += n
		t.Logf("%s: %d bytes", m[1], n)
	}
	if total == 0 {
		t.Fatalf("no init trace lines for the module's packages:\n%s", out)
	}
	if total >= 100_000 {
		t.Fatalf("start-up allocates %d bytes in the module's packages, want < 100 KB", total)
	}
	t.Logf("total %d bytes", total)
}

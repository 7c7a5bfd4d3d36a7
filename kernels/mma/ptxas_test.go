package mma

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
)

var (
	reEntry = regexp.MustCompile(`Compiling entry function '(\w+)' for 'sm_(\d+)'`)
	reSpill = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	reRegs  = regexp.MustCompile(`Used (\d+) registers`)
)

// resources parses ptxas -v output into per-entry register counts and
// stack/spill bytes.
func resources(out string) map[string][4]int {
	res := map[string][4]int{}
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		if m := reEntry.FindStringSubmatch(line); m != nil {
			cur = m[1]
			continue
		}
		if cur == "" {
			continue
		}
		r := res[cur]
		if m := reSpill.FindStringSubmatch(line); m != nil {
			for i := 0; i < 3; i++ {
				r[1+i], _ = strconv.Atoi(m[1+i])
			}
		}
		if m := reRegs.FindStringSubmatch(line); m != nil {
			r[0], _ = strconv.Atoi(m[1])
		}
		res[cur] = r
	}
	return res
}

// TestPTXAssembles runs ptxas -v -O3 on the module for sm_80, sm_86, sm_89
// and sm_90 (each target takes ~20 s of CPU, so -short skips it) and checks
// every kernel: it assembles, fits its block's register budget (65536 /
// threads, at most 255), has no stack frame or spills, and its tile's
// shared memory fits the target's opt-in limit unless the plan never picks
// it there (256x128 on sm_86/89). The embedded cubins must equal ptxas's
// output (staleness).
func TestPTXAssembles(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: ptxas takes ~20 s a target")
	}
	as := cudatools.Require(t, "ptxas")
	dir := t.TempDir()
	src := filepath.Join(dir, "mma.ptx")
	if err := os.WriteFile(src, modulePTX, 0o644); err != nil {
		t.Fatal(err)
	}
	sms := []int{80, 86, 89, 90}
	embedded := Module().Cubins
	var wg sync.WaitGroup
	for _, sm := range sms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(dir, fmt.Sprintf("mma.sm_%d.cubin", sm))
			msg, err := exec.Command(as, fmt.Sprintf("-arch=sm_%d", sm), "-O3", "-v", src, "-o", out).CombinedOutput()
			if err != nil {
				t.Errorf("ptxas sm_%d: %v\n%s", sm, err, msg)
				return
			}
			res := resources(string(msg))
			for _, c := range Variants() {
				r, ok := res[c.Name()]
				g := c.Tile.Geometry()
				if !ok {
					t.Errorf("sm_%d %s: not in ptxas -v output", sm, c.Name())
					continue
				}
				budget := min(255, 65536/g.Threads())
				if r[0] == 0 || r[0] > budget || r[1]+r[2]+r[3] != 0 {
					t.Errorf("sm_%d %s: %d registers (budget %d), %d B stack, %d B spill stores, %d B spill loads", sm, c.Name(), r[0], budget, r[1], r[2], r[3])
				}
				if g.SharedBytes() > SharedOptin(sm) && ChooseTile(Device{SM: sm, SMs: 1}, 1<<20, 1<<20) == c.Tile {
					t.Errorf("sm_%d %s: the plan picks a tile of %d shared bytes, over the %d limit", sm, c.Name(), g.SharedBytes(), SharedOptin(sm))
				}
			}
			for _, c := range AttnVariants() {
				if c.Paged {
					r, ok := res[CombineName(c.D, c.In)]
					if !ok || r[0] == 0 || r[1]+r[2]+r[3] != 0 {
						t.Errorf("sm_%d %s: in output %v, %d registers, %d B stack, spills %d/%d", sm, CombineName(c.D, c.In), ok, r[0], r[1], r[2], r[3])
					}
				}
				r, ok := res[c.Name()]
				if !ok || r[0] == 0 || r[0] > min(255, 65536/AttnThreads) || r[1]+r[2]+r[3] != 0 || c.SharedBytes() > SharedOptin(sm) {
					t.Errorf("sm_%d %s: in output %v, %d registers, %d B stack, %d B spill stores, %d B spill loads, %d shared bytes",
						sm, c.Name(), ok, r[0], r[1], r[2], r[3], c.SharedBytes())
				}
			}
			if want, ok := embedded[sm]; ok {
				got, err := os.ReadFile(out)
				if err != nil {
					t.Error(err)
				} else if !bytes.Equal(got, want) {
					t.Errorf("sm_%d: the embedded cubin is stale; run go generate ./kernels/mma", sm)
				}
			}
		}()
	}
	wg.Wait()
	for sm := range embedded {
		found := false
		for _, s := range sms {
			found = found || s == sm
		}
		if !found {
			t.Errorf("embedded cubin sm_%d not checked", sm)
		}
	}
}

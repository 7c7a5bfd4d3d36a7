package sasscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// PtxasLoop compiles the PTX file src with ptxas -arch=sm_86 (a missing
// ptxas skips, or fails under CI=true), decodes the code of kernel entry
// and returns its loop body (sched.LoopBody), the body's first
// instruction index and its cycle model: the reference a hand-scheduled
// loop is compared with.
func PtxasLoop(tb testing.TB, src, entry string) (body sass.Program, at int, cy *sched.Cycles) {
	tb.Helper()
	ptxas := cudatools.Require(tb, "ptxas")
	out := filepath.Join(tb.TempDir(), "ref.cubin")
	cudatools.Run(tb, ptxas, "-arch=sm_86", src, "-o", out)
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	cu, err := cubin.Read(b)
	if err != nil {
		tb.Fatal(err)
	}
	text := cu.Section(".text." + entry)
	if text == nil {
		tb.Fatalf("%s: no .text.%s", src, entry)
	}
	prog, err := sass.Decode(text.Data)
	if err != nil {
		tb.Fatal(err) // every word ptxas emits for the references is in the model
	}
	body, at, err = sched.LoopBody(prog)
	if err != nil {
		tb.Fatal(err)
	}
	cy, err = sched.CycleModel(body, sched.CycleOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return body, at, cy
}

// MixTable prints an instruction mix, most frequent first.
func MixTable(m map[sass.Op]int) string {
	type kv struct {
		op sass.Op
		n  int
	}
	var s []kv
	for k, v := range m {
		s = append(s, kv{k, v})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].n > s[j].n || s[i].n == s[j].n && s[i].op < s[j].op })
	var b strings.Builder
	for _, x := range s {
		fmt.Fprintf(&b, "%s %d, ", x.op, x.n)
	}
	return strings.TrimSuffix(b.String(), ", ")
}

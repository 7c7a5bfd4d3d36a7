//go:build amd64 && !purego

package fallback

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVDPBF16PSEncoding checks every instruction sgemm_gen.go writes as
// bytes (the Go assembler lacks VDPBF16PS) against the system assembler:
// each BYTE line's comment is assembled with GNU as and disassembled with
// objdump, and the bytes must be the same. It is skipped where as or objdump
// is missing; CI has both (gcc). The kernel's results are checked separately
// against MatMulRef (TestMatMulBF16Pairs).
func TestVDPBF16PSEncoding(t *testing.T) {
	as, err1 := exec.LookPath("as")
	objdump, err2 := exec.LookPath("objdump")
	if err1 != nil || err2 != nil {
		t.Skip("needs GNU as and objdump")
	}
	src, err := os.ReadFile("sgemm_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^\s*((?:BYTE \$0x[0-9a-f]{2}; )*BYTE \$0x[0-9a-f]{2}) // (.*)$`)
	var want []string // bytes as objdump prints them
	var text strings.Builder
	for _, l := range strings.Split(string(src), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var bs []string
		for _, b := range strings.Split(m[1], "; ") {
			bs = append(bs, strings.TrimPrefix(b, "BYTE $0x"))
		}
		want = append(want, strings.Join(bs, " "))
		fmt.Fprintln(&text, m[2])
	}
	if len(want) < 28 {
		t.Fatalf("found %d encoded instructions, want at least the kernel's 28", len(want))
	}
	dir := t.TempDir()
	in, obj := filepath.Join(dir, "in.s"), filepath.Join(dir, "in.o")
	if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "--64", "-o", obj, in).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	out, err := exec.Command(objdump, "-d", obj).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	// Lines such as "   0:	62 92 0e 40 52 c4    	vdpbf16ps %zmm28,%zmm30,%zmm0".
	dis := regexp.MustCompile(`^\s*[0-9a-f]+:\t([0-9a-f ]+?)\s*\t`)
	var got []string
	for _, l := range bytes.Split(out, []byte("\n")) {
		if m := dis.FindSubmatch(l); m != nil {
			got = append(got, string(m[1]))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("objdump shows %d instructions, want %d", len(got), len(want))
	}
	texts := strings.Split(strings.TrimSpace(text.String()), "\n")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: generated %s, as writes %s", texts[i], want[i], got[i])
		}
	}
}

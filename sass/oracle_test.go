package sass

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
)

var oracleLine = regexp.MustCompile(`^\s*/\*([0-9a-f]+)\*/\s*(.*?)\s*/\* 0x[0-9a-f]{16} \*/\s*$`)

var oracleErr = regexp.MustCompile(`at address 0x([0-9a-f]+)`)

// nopWord is NOP with stall 0 (nvdisasm prints "NOP;").
var nopWord = [16]byte{0x18, 0x79, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x0f, 0}

// disassemble runs nvdisasm -b SM<arch> -hex on the words and returns the
// text of each; a word nvdisasm refuses gets "" (it is replaced by a NOP and
// nvdisasm run again).
func disassemble(t *testing.T, tool string, arch int, words []byte) []string {
	t.Helper()
	words = append([]byte(nil), words...)
	refused := map[int]bool{}
	f := filepath.Join(t.TempDir(), "words.bin")
	var out []byte
	for {
		if err := os.WriteFile(f, words, 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		out, err = exec.Command(tool, "-b", "SM"+strconv.Itoa(arch), "-hex", f).CombinedOutput()
		if err == nil {
			break
		}
		m := oracleErr.FindSubmatch(out)
		if m == nil {
			t.Fatalf("nvdisasm: %v: %s", err, out)
		}
		a, _ := strconv.ParseUint(string(m[1]), 16, 64)
		k := int(a / 16)
		if k*16 >= len(words) || refused[k] {
			t.Fatalf("nvdisasm: %v: %s", err, out)
		}
		refused[k] = true
		copy(words[16*k:], nopWord[:])
	}
	var texts []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := oracleLine.FindStringSubmatch(sc.Text()); m != nil {
			texts = append(texts, m[2])
		}
	}
	for k := range refused {
		if k < len(texts) {
			texts[k] = ""
		}
	}
	return texts
}

func init() {
	// The package's own test programs: every example instruction of every
	// form, with a few control words.
	var ex, reuse Program
	for k, i := range Examples() {
		i.Ctrl = Control{Stall: uint8(1 + k%11), Yield: k%3 == 0, Wait: uint8(k % 64), Reuse: uint8(k % 8)}
		if _, err := i.Word(); err != nil {
			i.Ctrl.Reuse = 0
		}
		ex = append(ex, i)
		// Every example again with the most reuse flags the model lets
		// it take, so that a row allowing reuse where nvdisasm prints
		// none is caught whatever the examples' order.
		i.Ctrl = Control{Stall: 2}
		for r := uint8(7); r > 0; r-- {
			if i.Ctrl.Reuse = r; validWord(i) {
				reuse = append(reuse, i)
				break
			}
		}
	}
	for _, p := range []struct {
		name string
		p    Program
	}{{"sass.Examples", ex}, {"sass.Examples/reuse", reuse}} {
		var p86, p89 Program
		for _, i := range p.p {
			if i.Arch() == 89 {
				p89 = append(p89, i)
			} else {
				p86 = append(p86, i)
			}
		}
		OracleProgram(p.name+"/sm86", 86, p86)
		OracleProgram(p.name+"/sm89", 89, p89)
	}
}

// validWord says whether i encodes.
func validWord(i Inst) bool {
	_, err := i.Word()
	return err == nil
}

// TestLiveOracle encodes every registered program and compares nvdisasm's
// text with the printer, instruction by instruction. Without the tools it is
// skipped, except under CI=true, where that is a failure.
func TestLiveOracle(t *testing.T) {
	tool := cudatools.Require(t, "nvdisasm")
	for _, e := range OraclePrograms() {
		words, err := Encode(e.Program)
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if len(words) == 0 {
			continue
		}
		texts := disassemble(t, tool, e.Arch, words)
		if len(texts) != len(e.Program) {
			t.Errorf("%s: nvdisasm printed %d instructions of %d", e.Name, len(texts), len(e.Program))
			continue
		}
		bad := 0
		for k, i := range e.Program {
			if texts[k] == "" {
				bad++
				if bad <= 40 {
					t.Errorf("%s[%d]: nvdisasm refuses %s", e.Name, k, i.Listing(0))
				}
				continue
			}
			if got := i.Text(int64(16 * k)); got != texts[k] {
				bad++
				if bad <= 10 {
					t.Errorf("%s[%d]: printer %q, nvdisasm %q", e.Name, k, got, texts[k])
				}
			}
		}
		t.Logf("%s: %d instructions checked, %d differ", e.Name, len(e.Program), bad)
	}
}

package sm86attn

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/sass"
)

// decodeWithStandIns decodes every word; a word the model does not decode
// is replaced by a NOP (an LDGSTS for an LDGSTS form) carrying the same
// control word, and listed.
func decodeWithStandIns(t *testing.T, code []byte, nvText []string) (sass.Program, []string) {
	var p sass.Program
	var subs []string
	for k := 0; k+16 <= len(code); k += 16 {
		i, err := sass.DecodeWord(code[k : k+16])
		if err == nil {
			p = append(p, i)
			continue
		}
		hi := binary.LittleEndian.Uint64(code[k+8 : k+16])
		text := ""
		if k/16 < len(nvText) {
			text = nvText[k/16]
		}
		ctl := sass.New("NOP", "")
		if strings.Contains(text, "LDGSTS") {
			ctl = sass.New("LDGSTS", "E.BYPASS.128", sass.Shared(0, 0, 0), sass.G64(2, 0))
		}
		c, err2 := sass.ParseControl(controlString(hi >> 41))
		if err2 != nil {
			t.Fatal(err2)
		}
		ctl.Ctrl = c
		p = append(p, ctl)
		subs = append(subs, fmt.Sprintf("%04x %s -> %s", k, text, ctl.Listing(int64(k))))
	}
	return p, subs
}

// controlString renders the 23 control bits as Control.String does.
func controlString(v uint64) string {
	var b strings.Builder
	b.WriteString("[B")
	wait := v >> 11 & 63
	for i := 0; i < 6; i++ {
		if wait>>i&1 != 0 {
			b.WriteByte(byte('0' + i))
		} else {
			b.WriteByte('-')
		}
	}
	sb := func(x uint64) string {
		if x == 7 {
			return "-"
		}
		return fmt.Sprint(x)
	}
	y := "Y"
	if v>>4&1 != 0 {
		y = "-"
	}
	fmt.Fprintf(&b, ":R%s:W%s:%s:S%02d]", sb(v>>8&7), sb(v>>5&7), y, v&15)
	return b.String()
}

// TestPtxasComparison compiles the equivalent mma.sync FlashAttention-2
// PTX loop (testdata/attn_ref.ptx: the interior key block at head
// dimension 128) with ptxas for sm_86, decodes its loop and runs it
// through the same cycle model as the hand-scheduled unmasked loop; the
// hand-scheduled loop must take fewer cycles a block.
func TestPtxasComparison(t *testing.T) {
	ptxas := cudatools.Require(t, "ptxas")
	nv := cudatools.Require(t, "nvdisasm")
	dir := t.TempDir()
	cub := filepath.Join(dir, "ref.cubin")
	cudatools.Run(t, ptxas, "-arch=sm_86", "testdata/attn_ref.ptx", "-o", cub)
	b, err := os.ReadFile(cub)
	if err != nil {
		t.Fatal(err)
	}
	cu, err := sass.ReadCubin(b)
	if err != nil {
		t.Fatal(err)
	}
	text := cu.Section(".text.attn_ref")
	if text == nil {
		t.Fatal("no .text.attn_ref")
	}
	dis := cudatools.Disasm(t, nv, 86, text.Data)
	nvText := make([]string, len(text.Data)/16)
	for k := range nvText {
		nvText[k] = dis[int64(16*k)]
	}
	prog, subs := decodeWithStandIns(t, text.Data, nvText)
	body, at, err := sass.LoopBody(prog)
	if err != nil {
		t.Fatal(err)
	}
	var inLoop []string
	for _, s := range subs {
		var a int
		fmt.Sscanf(s, "%x", &a)
		if a/16 >= at && a/16 < at+len(body) {
			inLoop = append(inLoop, s)
		}
	}
	ref, err := sass.CycleModel(body, sass.CycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Generate(Config{HeadDim: 128})
	if err != nil {
		t.Fatal(err)
	}
	cy := loopCycles(t, p, p.Loop)
	if ref.HMMA != 128 {
		t.Errorf("ptxas loop has %g HMMA, want 128", ref.HMMA)
	}
	if cy.Period >= ref.Period {
		t.Errorf("hand-scheduled loop %.1f cycles a block, ptxas %.1f", cy.Period, ref.Period)
	}
	t.Logf("ptxas loop at %#x..%#x: %d instructions, stand-ins in the loop: %q", 16*at, 16*(at+len(body)-1), len(body), inLoop)
	t.Logf("\n| kernel (interior block, d=128) | loop body | mix | cycles/block | tensor-pipe share |\n|---|---|---|---|---|\n"+
		"| hand-scheduled (sm86attn) | %d | %s | %.1f | %.1f%% |\n| ptxas 11.8 -arch=sm_86 | %d | %s | %.1f | %.1f%% |",
		len(p.Insts[p.Loop[0]:p.Loop[1]+1]), mixTable(cy.MixByOp), cy.Period, 100*cy.TensorShare,
		len(body), mixTable(ref.MixByOp), ref.Period, 100*ref.TensorShare)
}

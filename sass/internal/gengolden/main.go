// Command gengolden writes sass/testdata/golden_sm86.txt: instruction words
// produced by ptxas for sm_86 from the PTX snippets in snippets.go, plus
// control-word variants of them, each with the text nvdisasm -b SM86 -hex
// prints for it. It needs the CUDA tools (ptxas, nvdisasm) on PATH or under
// $TCRT_CUDA_HOME/bin and is run by hand (go generate in package sass), never
// in CI.
//
// Each output line is
//
//	ADDR LO HI TEXT
//
// with ADDR the word's byte address in the raw file nvdisasm read (the text of
// a branch depends on it), LO and HI the two 64-bit halves of the word in hex,
// and TEXT nvdisasm's instruction text with the leading blanks removed.
package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/sass"
)

type word struct{ lo, hi uint64 }

// assemble runs ptxas on src and returns the words of every .text section.
func assemble(dir, src, arch string, i int) ([]word, error) {
	ptx := filepath.Join(dir, fmt.Sprintf("s%03d.ptx", i))
	cub := filepath.Join(dir, fmt.Sprintf("s%03d.cubin", i))
	if err := os.WriteFile(ptx, []byte(src), 0o644); err != nil {
		return nil, err
	}
	out, err := exec.Command(cudatools.Path("ptxas"), "-arch="+arch, ptx, "-o", cub).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("ptxas snippet %d: %v\n%s\n%s", i, err, out, src)
	}
	raw, err := os.ReadFile(cub)
	if err != nil {
		return nil, err
	}
	// ptxas writes the CUDA ABI version into e_version (e.g. 0x76), which
	// debug/elf refuses as a mismatched ELF version: patch a copy to
	// EV_CURRENT before parsing.
	if len(raw) >= 0x18 {
		binary.LittleEndian.PutUint32(raw[0x14:], 1)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	var ws []word
	for _, s := range f.Sections {
		if !strings.HasPrefix(s.Name, ".text") {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, err
		}
		for j := 0; j+16 <= len(b); j += 16 {
			ws = append(ws, word{binary.LittleEndian.Uint64(b[j:]), binary.LittleEndian.Uint64(b[j+8:])})
		}
	}
	return ws, nil
}

var lineRE = regexp.MustCompile(`^\s*/\*([0-9a-f]+)\*/\s*(.*?)\s*/\* 0x([0-9a-f]{16}) \*/\s*$`)
var errRE = regexp.MustCompile(`at address 0x([0-9a-f]+)`)

var nopWord = word{0x0000000000007918, 0x000fc00000000000}

// disasm disassembles ws with nvdisasm; a word nvdisasm refuses gets text "".
func disasm(dir, arch string, ws []word) ([]string, error) {
	ws = append([]word(nil), ws...)
	bad := map[int]bool{}
	for {
		var buf bytes.Buffer
		for _, w := range ws {
			binary.Write(&buf, binary.LittleEndian, w.lo)
			binary.Write(&buf, binary.LittleEndian, w.hi)
		}
		bin := filepath.Join(dir, "words.bin")
		if err := os.WriteFile(bin, buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		out, err := exec.Command(cudatools.Path("nvdisasm"), "-b", arch, "-hex", bin).CombinedOutput()
		if err != nil {
			m := errRE.FindSubmatch(out)
			if m == nil {
				return nil, fmt.Errorf("nvdisasm: %v: %s", err, out)
			}
			a, _ := strconv.ParseUint(string(m[1]), 16, 64)
			k := int(a / 16)
			if k >= len(ws) || bad[k] {
				return nil, fmt.Errorf("nvdisasm: %v: %s", err, out)
			}
			bad[k] = true
			ws[k] = nopWord
			continue
		}
		texts := make([]string, len(ws))
		sc := bufio.NewScanner(bytes.NewReader(out))
		n := 0
		for sc.Scan() {
			m := lineRE.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			a, _ := strconv.ParseUint(m[1], 16, 64)
			if int(a/16) != n {
				return nil, fmt.Errorf("nvdisasm: unexpected address %s", m[1])
			}
			texts[n] = m[2]
			n++
		}
		if n != len(ws) {
			return nil, fmt.Errorf("nvdisasm printed %d words of %d", n, len(ws))
		}
		for k := range bad {
			texts[k] = ""
		}
		return texts, nil
	}
}

// Control word: bits 105..127 of the word, i.e. hi bits 41..63.
func variants(w word) []word {
	ctl := w.hi >> 41
	base := w.hi & (1<<41 - 1)
	mk := func(c uint64) word { return word{w.lo, base | c<<41} }
	stall := ctl & 15
	yieldBit := ctl >> 4 & 1
	rest := ctl &^ 0x1f
	var out []word
	// another stall count (yield kept), and a changed wait mask, scoreboards.
	out = append(out, mk(rest|yieldBit<<4|(stall+3)%12))
	out = append(out, mk(ctl&^(0x3f<<11)|uint64(0x2d)<<11))
	out = append(out, mk(ctl&^(7<<5|7<<8)|3<<5|5<<8))
	return out
}

func main() {
	out := flag.String("o", "testdata/golden_sm86.txt", "output file (sm_86 words)")
	out89 := flag.String("o89", "testdata/golden_sm89.txt", "output file (sm_89-only words)")
	flag.Parse()
	if cudatools.Path("ptxas") == "" || cudatools.Path("nvdisasm") == "" {
		fmt.Fprintln(os.Stderr, "gengolden: ptxas/nvdisasm not found (set TCRT_CUDA_HOME or PATH)")
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "gengolden")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	seen := map[word]bool{}
	var ws []word
	add := func(w word) {
		if !seen[w] {
			seen[w] = true
			ws = append(ws, w)
		}
	}
	var base []word
	for i, s := range snippets() {
		got, err := assemble(dir, s, "sm_86", i)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, w := range got {
			if !seen[w] {
				base = append(base, w)
			}
			add(w)
		}
	}
	// Words for the model's forms that the snippets leave out, encoded
	// from the field layout by package sass (Examples): nvdisasm's text for
	// them is the check; the words nvdisasm refuses are dropped.
	var ws89 []word
	examples := sass.Examples()
	// A stall count of 2: nvdisasm refuses some opclasses (the ALU forms
	// with a uniform-register source) with a zero stall, and every refusal
	// costs a rerun.
	for k := range examples {
		if examples[k].Ctrl.Stall == 0 {
			examples[k].Ctrl.Stall = 2
		}
	}
	// The seed's float8 packs, both formats, both merge halves, several
	// control words (written from the field layout, checked by nvdisasm).
	for _, f := range []string{"E4M3", "E5M2"} {
		for _, h := range []string{"", ".H1"} {
			for _, c := range []string{"[B------:R-:W-:-:S04]", "[B0-----:R-:W-:Y:S02]", "[B--2---:R-:W-:-:S01]"} {
				i, err := sass.ParseInst(c+" F2FP.SATFINITE."+f+".F32.PACK_AB_MERGE_C R6, R9, R8, R6"+h+" ;", 0)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				examples = append(examples, i)
			}
		}
	}
	for _, i := range examples {
		b, err := i.Word()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		w := word{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
		if i.Arch() == 89 {
			ws89 = append(ws89, w)
			ws89 = append(ws89, variants(w)...)
			continue
		}
		if !seen[w] {
			base = append(base, w)
		}
		add(w)
	}
	for _, w := range base {
		for _, v := range variants(w) {
			add(v)
		}
	}
	if err := write(dir, "SM86", ws, *out, "ptxas (CUDA 11.8) -arch=sm_86 output, words encoded from the\n# model's field layout for forms ptxas did not emit, and control-word variants"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := write(dir, "SM89", ws89, *out89, "words encoded from the field layout for the sm_89-only forms\n# (ptxas 11.8 cannot emit them) and control-word variants"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// write disassembles ws for arch and writes the golden file.
func write(dir, arch string, ws []word, out, what string) error {
	// The first pass only finds the words nvdisasm refuses; it runs on
	// chunks, since nvdisasm stops at a refused word and each one costs a
	// rerun of its chunk (the kept words are disassembled again below, at
	// their addresses in the file).
	texts := make([]string, len(ws))
	for i := 0; i < len(ws); i += 256 {
		t, err := disasm(dir, arch, ws[i:min(i+256, len(ws))])
		if err != nil {
			return err
		}
		copy(texts[i:], t)
	}
	type line struct {
		w    word
		text string
	}
	var lines []line
	for i, w := range ws {
		if texts[i] == "" {
			continue
		}
		lines = append(lines, line{w, texts[i]})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated by sass/internal/gengolden (go generate in sass) from %s;\n", what)
	fmt.Fprintf(&b, "# text from nvdisasm -b %s -hex (CUDA 11.8). DO NOT EDIT.\n", arch)
	fmt.Fprintln(&b, "# ADDR LO HI TEXT (ADDR: the word's address in the file nvdisasm read)")
	// Re-disassemble the kept lines so addresses are those of this file.
	kept := make([]word, len(lines))
	for i, l := range lines {
		kept[i] = l.w
	}
	texts, err := disasm(dir, arch, kept)
	if err != nil {
		return err
	}
	n := 0
	for i, w := range kept {
		if texts[i] == "" {
			return errors.New("word refused on second pass")
		}
		fmt.Fprintf(&b, "%04x %016x %016x %s\n", i*16, w.lo, w.hi, texts[i])
		n++
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gengolden: %d words -> %s\n", n, out)
	return nil
}

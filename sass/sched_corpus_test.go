package sass

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// schedCubins lists every ptxas-built cubin of the repository the
// calibration covers: the corpus's, kernels/ptx's and kernels/mma's sm_86.
func schedCubins(t testing.TB) []string {
	var out []string
	for _, g := range []string{corpusDir + "/cubin/*.cubin", "../kernels/ptx/cubin/*.cubin", "../kernels/mma/cubin/*.sm_86.cubin"} {
		fs, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fs...)
	}
	return out
}

// decodeLoose decodes a code section word by word; a word outside the
// model becomes a placeholder holding only its control bits (CheckSchedule
// reports it as unmodeled). It returns the program and the undecoded count.
func decodeLoose(code []byte) (Program, int) {
	var p Program
	bad := 0
	for k := 0; k+16 <= len(code); k += 16 {
		i, err := DecodeWord(code[k : k+16])
		if err != nil {
			hi := binary.LittleEndian.Uint64(code[k+8 : k+16])
			i = Inst{Op: "?", Ctrl: controlFrom(hi >> 41)}
			bad++
		}
		p = append(p, i)
	}
	return p, bad
}

func TestSchedCorpusSurvey(t *testing.T) {
	byRule := map[string]int{}
	total := 0
	for _, f := range schedCubins(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range textSections(t, b) {
			p, bad := decodeLoose(trimTail(s.Data))
			nf := 0
			defer func(name string) {
				t.Logf("%s %s: %d words, %d undecoded, %d findings", filepath.Base(f), name, len(p), bad, nf)
			}(s.Name)
			for _, fd := range CheckSchedule(p, CheckOptions{}) {
				if fd.Rule == RuleUnmodeled {
					continue
				}
				total++
				nf++
				key := fmt.Sprintf("%s %s", fd.Rule, p[fd.Index].Op)
				if fd.Other >= 0 {
					key += " <- " + string(p[fd.Other].Op)
				}
				byRule[key]++
				if os.Getenv("SCHED_VERBOSE") != "" {
					t.Logf("%s %s: %v", filepath.Base(f), s.Name, fd)
				}
			}
		}
	}
	var ks []string
	for k, v := range byRule {
		ks = append(ks, fmt.Sprintf("%4d %s", v, k))
	}
	sort.Strings(ks)
	t.Logf("total %d\n%s", total, strings.Join(ks, "\n"))
}

// TestSchedDump (SCHED_DUMP=file:section) prints one section's listing and findings.
func TestSchedDump(t *testing.T) {
	spec := os.Getenv("SCHED_DUMP")
	if spec == "" {
		t.Skip("SCHED_DUMP unset")
	}
	fsec := strings.SplitN(spec, ":", 2)
	b, err := os.ReadFile(fsec[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range textSections(t, b) {
		if s.Name != ".text."+fsec[1] {
			continue
		}
		p, _ := decodeLoose(trimTail(s.Data))
		fs := CheckSchedule(p, CheckOptions{})
		at := map[int][]string{}
		for _, f := range fs {
			at[f.Index] = append(at[f.Index], fmt.Sprintf("%s<-%d %s", f.Rule, f.Other, f.Detail))
		}
		var sb strings.Builder
		for k, i := range p {
			fmt.Fprintf(&sb, "%4d %s\n", k, strings.TrimSpace(i.Listing(int64(16*k))))
			for _, x := range at[k] {
				fmt.Fprintf(&sb, "      !! %s\n", x)
			}
		}
		os.WriteFile("/tmp/schedcal_dump.txt", []byte(sb.String()), 0o644)
	}
}

package sim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// TestMMASweep compiles every mma.sync and mma.sp.sync shape, type,
// layout, saturation and sparsity-selector combination the PTX ISA gives
// for sm_80+ (and m8n8k4 f16 and f64, ldmatrix, movmatrix and
// cvt.rna.tf32.f32) with ptxas for sm_86 and sm_89, and requires every
// word ptxas emits to decode, re-encode to the same 128 bits and print as
// nvdisasm prints it, and every kernel to be accepted by the simulator
// (New(p).Unsupported() empty). Combinations ptxas refuses are listed,
// not failed. It starts ptxas about 600 times (as many at once as there
// are CPUs) and nvdisasm once per architecture, so it runs under
// TCRT_LONG_TESTS=1 only, with the CUDA tools.
func TestMMASweep(t *testing.T) {
	if !longtest.Enabled() {
		t.Skipf("the mma sweep runs ptxas hundreds of times: set %s=1", longtest.Var)
	}
	ptxas := cudatools.Require(t, "ptxas")
	nvdisasm := cudatools.Require(t, "nvdisasm")
	dir := t.TempDir()
	type gap struct{ what, kernel string }
	gaps := map[string]gap{}
	var refused []string
	ks := mmaSweepKernels()
	for _, sm := range corpus.Archs {
		// ptxas on every kernel, runtime.NumCPU() at a time; then one
		// nvdisasm run over all the kernels' code, laid end to end.
		cubins := make([][]byte, len(ks))
		msgs := make([]string, len(ks))
		var wg sync.WaitGroup
		sem := make(chan struct{}, goruntime.NumCPU())
		for i, k := range ks {
			src := filepath.Join(dir, fmt.Sprintf("%s.sm_%d.ptx", k.name, sm))
			ptx := fmt.Sprintf(".version 7.8\n.target sm_80\n.address_size 64\n%s", k.ptx)
			if err := os.WriteFile(src, []byte(ptx), 0o644); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				cub := strings.TrimSuffix(src, ".ptx") + ".cubin"
				if msg, err := exec.Command(ptxas, fmt.Sprintf("-arch=sm_%d", sm), "-O3", src, "-o", cub).CombinedOutput(); err != nil {
					msgs[i] = strings.SplitN(strings.TrimSpace(string(msg))+"\n", "\n", 2)[0]
					return
				}
				cubins[i], _ = os.ReadFile(cub) // nil (a failure below) if unreadable
			}()
		}
		wg.Wait()
		var blob []byte
		base := make([]int, len(ks))
		codes := make([][]byte, len(ks))
		for i, k := range ks {
			if msgs[i] != "" {
				if sm == corpus.Archs[0] {
					refused = append(refused, fmt.Sprintf("%s (%s): %s", k.name, k.inst, msgs[i]))
				}
				continue
			}
			if cubins[i] == nil {
				t.Fatalf("sm_%d %s: no cubin", sm, k.name)
			}
			for _, sec := range corpus.TextSections(t, cubins[i]) {
				if sec.Name == ".text."+k.name {
					codes[i] = sec.Data
				}
			}
			base[i] = len(blob)
			blob = append(blob, codes[i]...)
		}
		texts := cudatools.Disasm(t, nvdisasm, sm, blob)
		for i, k := range ks {
			code := codes[i]
			if code == nil {
				continue
			}
			for off := 0; off < len(code); off += 16 {
				at := int64(base[i] + off) // the word's address in the disassembled run
				want := texts[at]
				op := strings.Fields(strings.TrimPrefix(strings.TrimSpace(want), "@"))
				key := fmt.Sprint(sm, " ", want)
				if len(op) > 1 && strings.HasPrefix(want, "@") {
					op = op[1:]
				}
				if len(op) > 0 {
					key = fmt.Sprint("sm_", sm, " ", op[0])
				}
				if sm == corpus.Archs[0] && len(op) > 0 && slices.Contains([]string{"HMMA", "IMMA", "BMMA", "DMMA", "LDSM", "MOVM"}, strings.SplitN(op[0], ".", 2)[0]) {
					t.Logf("%s: %s", k.inst, want)
				}
				in, err := sass.DecodeWord(code[off : off+16])
				if err != nil {
					gaps[key+" undecoded"] = gap{fmt.Sprintf("%s: %v", want, err), k.name}
					continue
				}
				if w, err := in.Word(); err != nil || !equalWord(w[:], code[off:off+16]) {
					gaps[key+" re-encodes"] = gap{fmt.Sprintf("%s: %x %v", want, w, err), k.name}
				}
				if got := in.TextArch(sm, at); got != want {
					gaps[key+" misprinted"] = gap{fmt.Sprintf("got %q want %q", got, want), k.name}
				}
			}
			p, err := sass.Decode(code)
			if err != nil {
				continue
			}
			s, err := New(p)
			if err != nil {
				t.Fatal(err)
			}
			for i, err := range s.Unsupported() {
				if strings.Contains(err.Error(), "sparsity selector") {
					// ptxas 11.8 takes selectors 2 and 3 for mma.sp
					// m16n8k32 .f32.f16.f16.f32 (not for the f16 or bf16
					// forms), outside the PTX ISA's 0..1: undefined, refused
					t.Logf("sm_%d %s: %s: refused: %v", sm, k.name, k.inst, err)
					continue
				}
				gaps[fmt.Sprint("sm_", sm, " ", strings.Fields(p[i].Text(0))[0], " sim")] = gap{fmt.Sprintf("%s: %v", p[i].Text(int64(16*i)), err), k.name}
			}
		}
	}
	sort.Strings(refused)
	for _, r := range refused {
		t.Logf("ptxas refuses %s", r)
	}
	var keys []string
	for k := range gaps {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("%s: %s (kernel %s)", k, gaps[k].what, gaps[k].kernel)
	}
	t.Logf("%d kernels, %d refused by ptxas, %d gaps", len(ks), len(refused), len(gaps))
}

func equalWord(a, b []byte) bool { return string(a) == string(b) }

// sweepKernel is one PTX kernel of the sweep: name, the instruction it
// exercises (for the report) and its text.
type sweepKernel struct{ name, inst, ptx string }

// mmaSweepOperand is one fragment operand: its count of registers and PTX
// register type.
type mmaSweepOperand struct {
	n   int
	typ string
}

// mmaSweepKernel builds a kernel that loads A, B and C fragments from
// global memory (each lane its own 256-byte slot), runs inst on them and
// stores D. inst has %D, %A, %B, %C for the register lists (and the
// rest of its operands written out).
func mmaSweepKernel(name, inst string, d, a, b, c mmaSweepOperand) sweepKernel {
	var s strings.Builder
	fmt.Fprintf(&s, ".visible .entry %s(.param .u64 p)\n{\n", name)
	s.WriteString("\t.reg .b32 %t, %e;\n\t.reg .b64 %p, %q, %o;\n")
	ops := []struct {
		pre string
		o   mmaSweepOperand
	}{{"d", d}, {"a", a}, {"b", b}, {"c", c}}
	for _, op := range ops {
		fmt.Fprintf(&s, "\t.reg %s %%%s<%d>;\n", op.o.typ, op.pre, op.o.n)
	}
	s.WriteString("\tld.param.u64 %p, [p];\n\tcvta.to.global.u64 %p, %p;\n\tmov.u32 %t, %tid.x;\n")
	s.WriteString("\tmul.wide.u32 %o, %t, 256;\n\tadd.s64 %q, %p, %o;\n")
	off := 0
	list := func(pre string, n int) string {
		var l []string
		for i := 0; i < n; i++ {
			l = append(l, fmt.Sprintf("%%%s%d", pre, i))
		}
		return "{" + strings.Join(l, ", ") + "}"
	}
	width := func(typ string) int {
		if typ == ".f64" || typ == ".b64" {
			return 8
		}
		return 4
	}
	for _, op := range ops[1:] {
		for i := 0; i < op.o.n; i++ {
			fmt.Fprintf(&s, "\tld.global%s %%%s%d, [%%q+%d];\n", op.o.typ, op.pre, i, off)
			off += width(op.o.typ)
		}
	}
	fmt.Fprintf(&s, "\tld.global.b32 %%e, [%%q+%d];\n", off)
	r := strings.NewReplacer("%D", list("d", d.n), "%A", list("a", a.n), "%B", list("b", b.n), "%C", list("c", c.n))
	fmt.Fprintf(&s, "\t%s;\n", r.Replace(inst))
	off = 0
	for i := 0; i < d.n; i++ {
		fmt.Fprintf(&s, "\tst.global%s [%%q+%d], %%d%d;\n", d.typ, off, i)
		off += width(d.typ)
	}
	s.WriteString("\tret;\n}\n")
	return sweepKernel{name, inst, s.String()}
}

// mmaSweepKernels lists the sweep's kernels.
func mmaSweepKernels() []sweepKernel {
	var ks []sweepKernel
	n := 0
	add := func(inst string, d, a, b, c mmaSweepOperand) {
		n++
		ks = append(ks, mmaSweepKernel(fmt.Sprintf("k%03d", n), inst, d, a, b, c))
	}
	r := func(k int) mmaSweepOperand { return mmaSweepOperand{k, ".b32"} }
	f := func(k int) mmaSweepOperand { return mmaSweepOperand{k, ".f32"} }
	s := func(k int) mmaSweepOperand { return mmaSweepOperand{k, ".s32"} }
	acc := func(typ string, f32, f16 int) mmaSweepOperand {
		if typ == "f32" {
			return f(f32)
		}
		return r(f16)
	}
	ft := []string{"f16", "f32"}
	// Dense floating point.
	for _, sh := range []struct {
		shape string
		a, b  int
	}{{"m16n8k8", 2, 1}, {"m16n8k16", 4, 2}} {
		for _, dt := range ft {
			for _, ct := range ft {
				add(fmt.Sprintf("mma.sync.aligned.%s.row.col.%s.f16.f16.%s %%D, %%A, %%B, %%C", sh.shape, dt, ct),
					acc(dt, 4, 2), r(sh.a), r(sh.b), acc(ct, 4, 2))
			}
		}
		add(fmt.Sprintf("mma.sync.aligned.%s.row.col.f32.bf16.bf16.f32 %%D, %%A, %%B, %%C", sh.shape), f(4), r(sh.a), r(sh.b), f(4))
	}
	add("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 %D, %A, %B, %C", f(4), r(2), r(1), f(4))
	add("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 %D, %A, %B, %C", f(4), r(4), r(2), f(4))
	// m8n8k4 f16 (the Volta shape) in every layout; f64.
	for _, la := range []string{"row", "col"} {
		for _, lb := range []string{"row", "col"} {
			for _, dt := range ft {
				for _, ct := range ft {
					add(fmt.Sprintf("mma.sync.aligned.m8n8k4.%s.%s.%s.f16.f16.%s %%D, %%A, %%B, %%C", la, lb, dt, ct),
						acc(dt, 8, 4), r(2), r(2), acc(ct, 8, 4))
				}
			}
		}
	}
	f64 := mmaSweepOperand{1, ".f64"}
	add("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 %D, %A, %B, %C", mmaSweepOperand{2, ".f64"}, f64, f64, mmaSweepOperand{2, ".f64"})
	// Integers.
	for _, sh := range []struct {
		shape   string
		bits    int
		a, b, c int
	}{
		{"m8n8k16", 8, 1, 1, 2}, {"m16n8k16", 8, 2, 1, 4}, {"m16n8k32", 8, 4, 2, 4},
		{"m8n8k32", 4, 1, 1, 2}, {"m16n8k32", 4, 2, 1, 4}, {"m16n8k64", 4, 4, 2, 4},
	} {
		for _, ta := range []string{"s", "u"} {
			for _, tb := range []string{"s", "u"} {
				for _, sat := range []string{"", ".satfinite"} {
					add(fmt.Sprintf("mma.sync.aligned.%s.row.col%s.s32.%s%d.%s%d.s32 %%D, %%A, %%B, %%C", sh.shape, sat, ta, sh.bits, tb, sh.bits),
						s(sh.c), r(sh.a), r(sh.b), s(sh.c))
				}
			}
		}
	}
	for _, sh := range []struct {
		shape   string
		a, b, c int
	}{{"m8n8k128", 1, 1, 2}, {"m16n8k128", 2, 1, 4}, {"m16n8k256", 4, 2, 4}} {
		for _, bop := range []string{"xor", "and"} {
			add(fmt.Sprintf("mma.sync.aligned.%s.row.col.s32.b1.b1.s32.%s.popc %%D, %%A, %%B, %%C", sh.shape, bop),
				s(sh.c), r(sh.a), r(sh.b), s(sh.c))
		}
	}
	// Sparse.
	for sel := 0; sel < 4; sel++ {
		for _, sh := range []struct {
			shape string
			ab    int
		}{{"m16n8k16", 2}, {"m16n8k32", 4}} {
			for _, dt := range ft {
				for _, ct := range ft {
					add(fmt.Sprintf("mma.sp.sync.aligned.%s.row.col.%s.f16.f16.%s %%D, %%A, %%B, %%C, %%e, 0x%d", sh.shape, dt, ct, sel),
						acc(dt, 4, 2), r(sh.ab), r(sh.ab), acc(ct, 4, 2))
				}
			}
			add(fmt.Sprintf("mma.sp.sync.aligned.%s.row.col.f32.bf16.bf16.f32 %%D, %%A, %%B, %%C, %%e, 0x%d", sh.shape, sel),
				f(4), r(sh.ab), r(sh.ab), f(4))
		}
		for _, sh := range []struct {
			shape string
			ab    int
		}{{"m16n8k8", 2}, {"m16n8k16", 4}} {
			add(fmt.Sprintf("mma.sp.sync.aligned.%s.row.col.f32.tf32.tf32.f32 %%D, %%A, %%B, %%C, %%e, 0x%d", sh.shape, sel),
				f(4), r(sh.ab), r(sh.ab), f(4))
		}
		for _, sh := range []struct {
			shape string
			bits  int
			ab    int
		}{{"m16n8k32", 8, 2}, {"m16n8k64", 8, 4}, {"m16n8k64", 4, 2}, {"m16n8k128", 4, 4}} {
			for _, ta := range []string{"s", "u"} {
				for _, tb := range []string{"s", "u"} {
					for _, sat := range []string{"", ".satfinite"} {
						add(fmt.Sprintf("mma.sp.sync.aligned.%s.row.col%s.s32.%s%d.%s%d.s32 %%D, %%A, %%B, %%C, %%e, 0x%d", sh.shape, sat, ta, sh.bits, tb, sh.bits, sel),
							s(4), r(sh.ab), r(sh.ab), s(4))
					}
				}
			}
		}
	}
	// .ordered_metadata (PTX 8.5: expected refused by ptxas 11.8).
	add("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 %D, %A, %B, %C, %e, 0x0", f(4), r(2), r(2), f(4))
	// movmatrix, cvt.rna.tf32.f32.
	add("movmatrix.sync.aligned.m8n8.trans.b16 %d0, %a0", r(1), r(1), r(1), r(1))
	add("cvt.rna.tf32.f32 %d0, %a0", r(1), f(1), r(1), r(1))
	ks = append(ks, ldmatrixSweepKernels(&n)...)
	return ks
}

// ldmatrixSweepKernels are ldmatrix .x1/.x2/.x4, with and without .trans,
// on .shared and .shared::cta addresses in 32-bit and 64-bit registers.
func ldmatrixSweepKernels(n *int) []sweepKernel {
	var ks []sweepKernel
	for _, num := range []int{1, 2, 4} {
		for _, trans := range []string{"", ".trans"} {
			for _, ss := range []string{".shared", ".shared::cta"} {
				for _, a64 := range []bool{false, true} {
					*n++
					name := fmt.Sprintf("k%03d", *n)
					var s strings.Builder
					fmt.Fprintf(&s, ".visible .entry %s(.param .u64 p)\n{\n", name)
					s.WriteString("\t.shared .align 16 .b8 sm[512];\n\t.reg .b32 %t, %a, %v, %d<4>;\n\t.reg .b64 %p, %q, %o, %w;\n")
					s.WriteString("\tld.param.u64 %p, [p];\n\tcvta.to.global.u64 %p, %p;\n\tmov.u32 %t, %tid.x;\n")
					s.WriteString("\tmul.wide.u32 %o, %t, 16;\n\tadd.s64 %q, %p, %o;\n\tld.global.b32 %v, [%q];\n")
					s.WriteString("\tmov.u32 %a, sm;\n\tshl.b32 %d0, %t, 4;\n\tadd.u32 %a, %a, %d0;\n\tst.shared.b32 [%a], %v;\n\tbar.sync 0;\n")
					addr := "%a"
					if a64 {
						s.WriteString("\tcvt.u64.u32 %w, %a;\n")
						addr = "%w"
					}
					var regs []string
					for i := 0; i < num; i++ {
						regs = append(regs, fmt.Sprintf("%%d%d", i))
					}
					inst := fmt.Sprintf("ldmatrix.sync.aligned.m8n8.x%d%s%s.b16 {%s}, [%s]", num, trans, ss, strings.Join(regs, ", "), addr)
					fmt.Fprintf(&s, "\t%s;\n", inst)
					for i := 0; i < num; i++ {
						fmt.Fprintf(&s, "\tst.global.b32 [%%q+%d], %%d%d;\n", 4*i, i)
					}
					s.WriteString("\tret;\n}\n")
					ks = append(ks, sweepKernel{name, inst, s.String()})
				}
			}
		}
	}
	return ks
}

package cubin

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The tests that need NVIDIA's tools assemble the PTX under
// testdata/cubin with ptxas, take the machine code and metadata from
// ptxas's cubin, write a cubin with Write from them, and check that
// cuobjdump and nvdisasm accept it and read it the same, and that it agrees
// with ptxas's cubin section by section and record by record, apart from
// the differences listed in acceptedCubinDifferences.

// acceptedCubinDifferences lists every way a Write cubin may differ
// from ptxas 11.8's cubin for the same kernels, keyed as compareCubins
// reports differences, with the reason each is acceptable. Any other
// difference fails the test.
var acceptedCubinDifferences = map[string]string{
	"section-missing .debug_frame": "DWARF call-frame information for debuggers (cuda-gdb) and unwinders; " +
		"these kernels make no calls, and the driver is reported to load cubins without it (unverified here)",
	"section-missing .rel.debug_frame": "the one relocation of .debug_frame (its R_CUDA_64 function address); goes with .debug_frame",
	"section-missing .nv.rel.action": "ptxas's fixed table describing the R_CUDA_* relocation types; " +
		"the writer emits no relocation sections, so there is nothing for it to describe",
	"symbol-missing .debug_frame":   "the section symbol of the omitted .debug_frame",
	"symbol-missing .nv.rel.action": "the section symbol of the omitted .nv.rel.action",
	"section-size .symtab":          "two fewer symbols: the section symbols of the omitted sections",
	"section-info .symtab":          "sh_info counts the local symbols, two fewer without those section symbols",
	"section-size .strtab": "ptxas's .strtab also holds names it never uses (.shstrtab, .symtab_shndx, .nv.info, " +
		"_param, .nv.shared.<k> for kernels without shared memory, .rela.debug_frame, ...); the writer's holds the " +
		"names its symbols use. Names are compared resolved, never by offset",
	"section-data .strtab":   "as section-size .strtab",
	"section-size .shstrtab": "as for .strtab: ptxas's .shstrtab names sections it did not write; the writer's names exactly its sections",
	"section-data .shstrtab": "as section-size .shstrtab",
	"section-offsets": "sh_offset and e_shoff/e_phoff follow from the sizes of the sections before them, " +
		"which differ as listed; alignment of every section is the same",
	"segment-offsets": "the R E LOAD covers the same sections (.nv.constant0.* through the last .text.*, checked), " +
		"but starts elsewhere and the padding before the 128-aligned .text differs; the PHDR segments move with e_phoff",
}

func ptr() Param { return Param{Size: 8, Align: 8} }

// cubinCases are the PTX sources under testdata/cubin and the kernel
// descriptions expected from ptxas 11.8's cubins for sm_86, less Code. They
// are written by hand from the PTX and the disassembly, so they check the
// reader as well.
var cubinCases = []struct {
	file string
	want []Kernel // in PTX order
}{
	{"add.ptx", []Kernel{{
		Name: "add_f32", Params: []Param{ptr(), ptr(), ptr()},
		Registers: 12, ExitOffsets: []int{0xb0},
	}}},
	{"shared.ptx", []Kernel{{
		Name: "shfl_sum", Params: []Param{ptr(), {Size: 4, Align: 4}},
		Registers: 10, Barriers: 1, SharedStatic: 512, SharedAlign: 4,
		ExitOffsets: []int{0xf0}, CoopOffsets: []int{0xc0},
	}}},
	{"multi.ptx", []Kernel{
		{
			Name: "params",
			Params: []Param{{Size: 1, Align: 1}, {Size: 2, Align: 2}, {Size: 8, Align: 8},
				{Size: 20, Align: 16}, {Size: 4, Align: 4}, {Size: 3, Align: 4}}, // t[3] is .align 8 in the PTX; 4 gives the same offset
			Registers: 8, MaxThreads: [3]int{128, 1, 1}, DynamicShared: true, SharedAlign: 16,
			ExitOffsets: []int{0x60},
		},
		{
			Name: "dyn", Params: []Param{ptr()}, Registers: 8, MaxRegisters: 32, Barriers: 4,
			SharedStatic: 0x70, SharedAlign: 16, // 100 static bytes, rounded up to where dsm starts
			ReqThreads: [3]int{64, 1, 1}, ExitOffsets: []int{0xb0},
		},
		{
			Name: "frame", Params: []Param{ptr(), {Size: 4, Align: 4}}, Registers: 12, FrameSize: 0x40,
			DynamicShared: true, SharedAlign: 16, ExitOffsets: []int{0xc0},
		},
		{
			Name: "noparams", Registers: 4, DynamicShared: true, SharedAlign: 16, ExitOffsets: []int{0x10},
		},
	}},
}

// assemble runs ptxas on a testdata PTX file, retargeted to sm_<arch>, and
// returns the cubin.
func assemble(t *testing.T, file string, arch int) []byte {
	t.Helper()
	ptxas := cudatools.Require(t, "ptxas")
	src, err := os.ReadFile(corpus.Path("cubin", file))
	if err != nil {
		t.Fatal(err)
	}
	// The PTX target becomes the cubin's virtual architecture (e_flags bits
	// 16-23), so assemble each architecture from its own target.
	src = bytes.Replace(src, []byte(".target sm_86"), []byte(fmt.Sprintf(".target sm_%d", arch)), 1)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "k.ptx"), filepath.Join(dir, "k.cubin")
	if err := os.WriteFile(in, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cudatools.Run(t, ptxas, "-arch=sm_"+fmt.Sprint(arch), in, "-o", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCubinMatchesPtxas is the validation of the writer against ptxas.
func TestCubinMatchesPtxas(t *testing.T) {
	cuobjdump := cudatools.Require(t, "cuobjdump")
	nvdisasm := cudatools.Require(t, "nvdisasm")
	exact := corpus.Ptxas118(t)
	if !exact {
		t.Log("ptxas is not release 11.8: the hand-written kernel descriptions are not checked")
	}
	for _, tc := range cubinCases {
		for _, arch := range []int{86, 89} {
			t.Run(fmt.Sprintf("%s/sm_%d", tc.file, arch), func(t *testing.T) {
				ref := assemble(t, tc.file, arch)
				rc, err := Read(ref)
				if err != nil {
					t.Fatalf("Read(ptxas's cubin): %v", err)
				}
				kernels := make([]Kernel, len(rc.Kernels))
				for i, ki := range rc.Kernels {
					if len(ki.Unknown) > 0 {
						t.Errorf("kernel %s: ptxas wrote records the description lacks: %v", ki.Kernel.Name, ki.Unknown)
					}
					kernels[i] = ki.Kernel
				}
				if exact {
					if len(kernels) != len(tc.want) {
						t.Fatalf("ptxas's cubin has kernels %v, want %d", rc.KernelNames(), len(tc.want))
					}
					for i := range kernels {
						w := tc.want[i]
						w.Code = kernels[i].Code
						if !reflect.DeepEqual(kernels[i], w) {
							t.Errorf("kernel %d read from ptxas's cubin:\n got %+v\nwant %+v", i, describe(kernels[i]), describe(w))
						}
					}
				}
				ours, err := Write(arch, kernels...)
				if err != nil {
					t.Fatalf("Write: %v", err)
				}
				oc, err := Read(ours)
				if err != nil {
					t.Fatalf("Read(Write's cubin): %v", err)
				}
				for i := range oc.Kernels {
					if !reflect.DeepEqual(oc.Kernels[i].Kernel, kernels[i]) {
						t.Errorf("kernel %d does not survive Write and Read:\n got %+v\nwant %+v",
							i, describe(oc.Kernels[i].Kernel), describe(kernels[i]))
					}
				}

				// The tools accept the cubin and read it as ptxas's.
				dir := t.TempDir()
				refPath, ourPath := filepath.Join(dir, "ptxas.cubin"), filepath.Join(dir, "ours.cubin")
				if err := os.WriteFile(refPath, ref, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(ourPath, ours, 0o644); err != nil {
					t.Fatal(err)
				}
				elfText := cudatools.Run(t, cuobjdump, "-elf", ourPath)
				for _, bad := range []string{"error", "warning", "unknown", "Unknown"} {
					if strings.Contains(elfText, bad) {
						t.Errorf("cuobjdump -elf output on our cubin mentions %q:\n%s", bad, elfText)
					}
				}
				for _, ki := range oc.Kernels {
					if !strings.Contains(elfText, ".text."+ki.Kernel.Name) {
						t.Errorf("cuobjdump -elf does not list .text.%s", ki.Kernel.Name)
					}
				}
				if a, b := cudatools.Run(t, nvdisasm, "-c", "-hex", refPath), cudatools.Run(t, nvdisasm, "-c", "-hex", ourPath); a != b {
					t.Errorf("nvdisasm -c -hex differs:\n%s", lineDiff(a, b))
				}
				if a, b := cudatools.Run(t, cuobjdump, "-sass", refPath), cudatools.Run(t, cuobjdump, "-sass", ourPath); a != b {
					t.Errorf("cuobjdump -sass differs:\n%s", lineDiff(a, b))
				}

				// Section by section, record by record.
				seen := map[string]bool{}
				for _, d := range compareCubins(rc, oc) {
					if _, ok := acceptedCubinDifferences[d.key]; !ok {
						t.Errorf("unexplained difference from ptxas's cubin: %s: %s", d.key, d.detail)
					} else if !seen[d.key] {
						seen[d.key] = true
						t.Logf("accepted: %s (%s)", d.key, d.detail)
					}
				}
			})
		}
	}
}

// describe prints a kernel without its code, for failure messages.
func describe(k Kernel) string {
	k.Code = nil
	return fmt.Sprintf("%+v", k)
}

// lineDiff returns the first differing lines of two texts.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("line %d:\n  ptxas: %s\n  ours:  %s", i+1, x, y))
			if len(out) == 5 {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

type cubinDiff struct{ key, detail string }

// compareCubins compares two cubins section by section, symbol by symbol
// and .nv.info record by record, with section and symbol indices resolved
// to names, and returns the differences of b from a.
func compareCubins(a, b *File) []cubinDiff {
	var diffs []cubinDiff
	add := func(key, format string, args ...any) {
		diffs = append(diffs, cubinDiff{key, fmt.Sprintf(format, args...)})
	}
	// Header.
	if a.Version != b.Version {
		add("header-version", "%d vs %d", a.Version, b.Version)
	}
	if a.Flags != b.Flags {
		add("header-flags", "%#x vs %#x", a.Flags, b.Flags)
	}
	if a.OSABI != b.OSABI || a.ABIVersion != b.ABIVersion {
		add("header-osabi", "%#x/%d vs %#x/%d", a.OSABI, a.ABIVersion, b.OSABI, b.ABIVersion)
	}
	if a.Type != b.Type || a.Machine != b.Machine {
		add("header-type", "%v/%v vs %v/%v", a.Type, a.Machine, b.Type, b.Machine)
	}

	// Sections.
	var common []string
	for _, s := range a.Sections {
		if b.Section(s.Name) == nil {
			add("section-missing "+s.Name, "ptxas writes it")
		} else {
			common = append(common, s.Name)
		}
	}
	for _, s := range b.Sections {
		if a.Section(s.Name) == nil {
			add("section-extra "+s.Name, "ptxas does not write it")
		}
	}
	var bOrder []string
	for _, s := range b.Sections {
		if a.Section(s.Name) != nil {
			bOrder = append(bOrder, s.Name)
		}
	}
	if !reflect.DeepEqual(common, bOrder) {
		add("section-order", "%v vs %v", common, bOrder)
	}
	offsetsDiffer := false
	for _, name := range common {
		x, y := a.Section(name), b.Section(name)
		if x.Offset != y.Offset {
			offsetsDiffer = true
		}
		if x.Type != y.Type {
			add("section-type "+name, "%v vs %v", x.Type, y.Type)
		}
		if x.Flags != y.Flags {
			add("section-flags "+name, "%#x vs %#x", uint64(x.Flags), uint64(y.Flags))
		}
		if x.Align != y.Align || x.EntSize != y.EntSize {
			add("section-align "+name, "align %d/entsize %d vs %d/%d", x.Align, x.EntSize, y.Align, y.EntSize)
		}
		if xl, yl := a.SectionName(int(x.Link)), b.SectionName(int(y.Link)); xl != yl {
			add("section-link "+name, "%q vs %q", xl, yl)
		}
		switch {
		case x.Type == elf.SHT_SYMTAB:
			if x.Info != y.Info {
				add("section-info "+name, "%d vs %d", x.Info, y.Info)
			}
		case strings.HasPrefix(name, ".text."):
			xr, yr := x.Info>>shiRegisterShift, y.Info>>shiRegisterShift
			xs, ys := a.SymbolName(int(x.Info&0xffffff)), b.SymbolName(int(y.Info&0xffffff))
			if xr != yr || xs != ys {
				add("section-info "+name, "registers %d symbol %q vs %d %q", xr, xs, yr, ys)
			}
		default:
			if xi, yi := a.SectionName(int(x.Info)), b.SectionName(int(y.Info)); xi != yi {
				add("section-info "+name, "%q vs %q", xi, yi)
			}
		}
		if x.Size != y.Size {
			add("section-size "+name, "%#x vs %#x", x.Size, y.Size)
		}
		switch {
		case x.Type == elf.SHT_SYMTAB:
			diffs = append(diffs, compareSymbols(a, b)...)
		case x.Type == shtCUDAInfo:
			diffs = append(diffs, compareInfo(name, a, b, x.Data, y.Data)...)
		case !bytes.Equal(x.Data, y.Data):
			add("section-data "+name, "contents differ")
		}
	}
	if offsetsDiffer {
		add("section-offsets", "sh_offset of common sections differ")
	}

	// Program headers.
	if len(a.Segments) != len(b.Segments) {
		add("segment-count", "%d vs %d", len(a.Segments), len(b.Segments))
	} else {
		moved := false
		for i := range a.Segments {
			x, y := a.Segments[i], b.Segments[i]
			if x.Type != y.Type || x.Flags != y.Flags || x.Align != y.Align {
				add(fmt.Sprintf("segment-%d", i), "%+v vs %+v", x, y)
			}
			if x.Type == elf.PT_LOAD && x.Flags&elf.PF_W != 0 || x.Type == elf.PT_PHDR {
				if x.Memsz != y.Memsz || x.Filesz != y.Filesz {
					add(fmt.Sprintf("segment-%d-size", i), "%+v vs %+v", x, y)
				}
			}
			if x.Off != y.Off || x.Filesz != y.Filesz || x.Memsz != y.Memsz {
				moved = true
			}
		}
		for _, c := range []*File{a, b} {
			if err := checkCodeSegment(c); err != nil {
				add("segment-load-span", "%v", err)
			}
		}
		if moved {
			add("segment-offsets", "segment offsets or code-segment size differ")
		}
	}
	return diffs
}

// checkCodeSegment checks that the cubin's R E LOAD segment spans from the
// first .nv.constant0 section to the end of the last .text section.
func checkCodeSegment(c *File) error {
	var start, end uint64
	found := false
	for _, s := range c.Sections {
		if strings.HasPrefix(s.Name, ".nv.constant0.") || strings.HasPrefix(s.Name, ".text.") {
			if !found {
				start, found = s.Offset, true
			}
			end = s.Offset + s.Size
		}
	}
	for _, p := range c.Segments {
		if p.Type == elf.PT_LOAD && p.Flags == elf.PF_R|elf.PF_X && p.Off != 0 && p.Filesz > 0 && p.Off < end && p.Off+p.Filesz > start {
			if p.Off != start || p.Off+p.Filesz != end || p.Memsz != p.Filesz {
				return fmt.Errorf("code LOAD %+v, sections span %#x..%#x", p, start, end)
			}
			return nil
		}
	}
	return fmt.Errorf("no LOAD segment covers the code")
}

// compareSymbols compares the symbol tables by name: for each symbol its
// binding and type, st_other, section (by name), value and size, and the
// relative order of the symbols both have.
func compareSymbols(a, b *File) []cubinDiff {
	var diffs []cubinDiff
	type key struct {
		info, other uint8
		section     string
		value, size uint64
	}
	index := func(c *File) (map[string]key, []string) {
		m := map[string]key{}
		var order []string
		for _, s := range c.Symbols[1:] {
			m[s.Name] = key{s.Info, s.Other, c.SectionName(int(s.Section)), s.Value, s.Size}
			order = append(order, s.Name)
		}
		return m, order
	}
	am, ao := index(a)
	bm, bo := index(b)
	var common []string
	for _, n := range ao {
		x := am[n]
		y, ok := bm[n]
		switch {
		case !ok:
			diffs = append(diffs, cubinDiff{"symbol-missing " + n, "ptxas writes it"})
			continue
		case x != y:
			diffs = append(diffs, cubinDiff{"symbol " + n, fmt.Sprintf("%+v vs %+v", x, y)})
		}
		common = append(common, n)
	}
	var bcommon []string
	for _, n := range bo {
		if _, ok := am[n]; !ok {
			diffs = append(diffs, cubinDiff{"symbol-extra " + n, "ptxas does not write it"})
		} else {
			bcommon = append(bcommon, n)
		}
	}
	if !reflect.DeepEqual(common, bcommon) {
		diffs = append(diffs, cubinDiff{"symbol-order", fmt.Sprintf("%v vs %v", common, bcommon)})
	}
	return diffs
}

// compareInfo compares two .nv.info sections record by record, with the
// symbol index that some records start with resolved to the symbol's name.
func compareInfo(section string, a, b *File, x, y []byte) []cubinDiff {
	xr, err1 := ParseInfo(x)
	yr, err2 := ParseInfo(y)
	if err1 != nil || err2 != nil {
		return []cubinDiff{{"info-parse " + section, fmt.Sprintf("%v / %v", err1, err2)}}
	}
	norm := func(c *File, r InfoRecord) string {
		if r.HasSymbol() {
			return fmt.Sprintf("%v %v symbol %q % x", r.Attr, r.Format, c.SymbolName(int(r.Symbol())), r.Data[4:])
		}
		return r.String()
	}
	var diffs []cubinDiff
	for i := 0; i < len(xr) || i < len(yr); i++ {
		var xs, ys string = "(none)", "(none)"
		if i < len(xr) {
			xs = norm(a, xr[i])
		}
		if i < len(yr) {
			ys = norm(b, yr[i])
		}
		if xs != ys {
			diffs = append(diffs, cubinDiff{fmt.Sprintf("info-record %s #%d", section, i), xs + " vs " + ys})
		}
	}
	return diffs
}

// --- Tests that need no tools. ---

// testKernels are kernel descriptions for the pure-Go tests. Their code is
// placeholder words (never disassembled).
func testKernels() []Kernel {
	code := func(n int) []byte {
		b := make([]byte, 16*n)
		for i := range b {
			b[i] = byte(i*7 + n)
		}
		return b
	}
	return []Kernel{
		{Name: "a", Code: code(8), Params: []Param{ptr(), {Size: 4, Align: 4}}, Registers: 10, Barriers: 1,
			SharedStatic: 512, SharedAlign: 4, ExitOffsets: []int{0x50, 0x60}, CoopOffsets: []int{0x20}},
		{Name: "b_kernel", Code: code(16), Registers: 4, ExitOffsets: []int{0x10}},
		{Name: "c", Code: code(4), Params: []Param{{Size: 1, Align: 1}, {Size: 20, Align: 16}}, Registers: 37,
			MaxRegisters: 64, SharedStatic: 0x70, SharedAlign: 16, FrameSize: 64, ReqThreads: [3]int{64, 2, 1},
			ExitOffsets: []int{0x30}},
		{Name: "d", Code: code(2), Params: []Param{ptr()}, Registers: 6, DynamicShared: true, SharedAlign: 16,
			MaxThreads: [3]int{256, 1, 1}, ExitOffsets: []int{0x10}},
	}
}

func TestParamLayout(t *testing.T) {
	// The layout ptxas 11.8 chose for multi.ptx's params kernel:
	// .u8, .u16, .f64, .align 16 .b8 [20], .u32, .align 8 .b8 [3].
	params := []Param{{1, 1}, {2, 2}, {8, 8}, {20, 16}, {4, 4}, {3, 8}}
	offs, size, err := ParamLayout(params)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 2, 8, 0x10, 0x24, 0x28}; !reflect.DeepEqual(offs, want) || size != 0x2b {
		t.Errorf("ParamLayout = %#x, %#x; want %#x, 0x2b", offs, size, want)
	}
	if _, size, err := ParamLayout(nil); err != nil || size != 0 {
		t.Errorf("ParamLayout(nil) = %d, %v", size, err)
	}
	for _, bad := range [][]Param{{{0, 4}}, {{4, 3}}, {{4, 0}}, {{4, 512}}, {{4097, 4}}, {{4000, 4}, {200, 8}}} {
		if _, _, err := ParamLayout(bad); err == nil {
			t.Errorf("ParamLayout(%v): no error", bad)
		}
	}
}

func TestWriteCubinLayout(t *testing.T) {
	for _, arch := range []int{86, 89} {
		ks := testKernels()
		b, err := Write(arch, ks...)
		if err != nil {
			t.Fatal(err)
		}
		f, err := openCubinELF(b)
		if err != nil {
			t.Fatal(err)
		}
		if f.Class != elf.ELFCLASS64 || f.OSABI != 0x33 || f.ABIVersion != 7 || f.Type != elf.ET_EXEC || f.Machine != elf.EM_CUDA {
			t.Errorf("sm_%d header: %+v", arch, f.FileHeader)
		}
		if flags := uint32(b[48]) | uint32(b[49])<<8 | uint32(b[50])<<16 | uint32(b[51])<<24; flags != uint32(arch)<<16|0x500|uint32(arch) {
			t.Errorf("sm_%d e_flags %#x", arch, flags)
		}
		if arch == 86 && ElfFlags(86) != 0x560556 {
			t.Errorf("ElfFlags(86) = %#x", ElfFlags(86))
		}
		var names []string
		for _, s := range f.Sections[1:] {
			names = append(names, s.Name)
			if s.Type != elf.SHT_NOBITS && s.Addralign > 1 && s.Offset%s.Addralign != 0 {
				t.Errorf("section %s at %#x, not aligned to %d", s.Name, s.Offset, s.Addralign)
			}
		}
		want := []string{".shstrtab", ".strtab", ".symtab", ".nv.info",
			".nv.info.d", ".nv.info.c", ".nv.info.b_kernel", ".nv.info.a",
			".nv.constant0.d", ".nv.constant0.c", ".nv.constant0.b_kernel", ".nv.constant0.a",
			".text.d", ".text.c", ".text.b_kernel", ".text.a",
			".nv.shared.d", ".nv.shared.c", ".nv.shared.a"}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("sections %v\nwant %v", names, want)
		}
		for _, k := range ks {
			text := f.Section(".text." + k.Name)
			if text.Addralign != 128 || text.Flags != elf.SHF_ALLOC|elf.SHF_EXECINSTR|elf.SectionFlag(k.Barriers<<20) ||
				text.Info>>24 != uint32(k.Registers) {
				t.Errorf("%s: %+v", text.Name, text.SectionHeader)
			}
			data, _ := text.Data()
			if !bytes.Equal(data, k.Code) {
				t.Errorf("%s: code not written as given", text.Name)
			}
			_, psize, _ := ParamLayout(k.Params)
			if c0 := f.Section(".nv.constant0." + k.Name); c0.Size != uint64(ParamBase+psize) || c0.Flags != elf.SHF_ALLOC {
				t.Errorf("%s: %+v", c0.Name, c0.SectionHeader)
			}
		}
		if sh := f.Section(".nv.shared.d"); sh.Size != 0 || sh.Addralign != 16 || sh.Type != elf.SHT_NOBITS {
			t.Errorf(".nv.shared.d: %+v", sh.SectionHeader)
		}
		if sh := f.Section(".nv.shared.a"); sh.Size != 512 || sh.Addralign != 4 || sh.Flags != elf.SHF_WRITE|elf.SHF_ALLOC {
			t.Errorf(".nv.shared.a: %+v", sh.SectionHeader)
		}
		// Program headers: PHDR, code LOAD, shared LOAD (laid out with
		// alignment: d 0, c 0x70, a 0x70+512), PHDR LOAD.
		if len(f.Progs) != 4 || f.Progs[0].Type != elf.PT_PHDR || f.Progs[2].Flags != elf.PF_R|elf.PF_W ||
			f.Progs[2].Memsz != 0x70+512 || f.Progs[2].Filesz != 0 {
			for _, p := range f.Progs {
				t.Logf("%+v", p.ProgHeader)
			}
			t.Errorf("sm_%d: unexpected program headers", arch)
		}
		c, err := Read(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkCodeSegment(c); err != nil {
			t.Error(err)
		}
		hasWAR := false
		for _, r := range c.Kernels[0].Info {
			hasWAR = hasWAR || r.Attr == AttrSW2861232WAR
		}
		if hasWAR != (arch == 86) {
			t.Errorf("sm_%d: EIATTR_SW2861232_WAR present = %v", arch, hasWAR)
		}
	}
}

func TestWriteCubinDeterministic(t *testing.T) {
	a, err := Write(86, testKernels()...)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		b, err := Write(86, testKernels()...)
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("second write differs (err %v)", err)
		}
	}
	// Without shared memory there is no RW segment.
	b, err := Write(89, testKernels()[1])
	if err != nil {
		t.Fatal(err)
	}
	f, err := openCubinELF(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Progs) != 3 || f.Section(".nv.shared.b_kernel") != nil {
		t.Errorf("kernel without shared memory: %d program headers", len(f.Progs))
	}
}

func TestCubinRoundTrip(t *testing.T) {
	ks := testKernels()
	b, err := Write(86, ks...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Arch != 86 || c.Version != 118 {
		t.Errorf("arch %d version %d", c.Arch, c.Version)
	}
	if len(c.Kernels) != len(ks) {
		t.Fatalf("read kernels %v", c.KernelNames())
	}
	for i, ki := range c.Kernels {
		if !reflect.DeepEqual(ki.Kernel, ks[i]) {
			t.Errorf("kernel %d:\n got %+v\nwant %+v", i, describe(ki.Kernel), describe(ks[i]))
		}
		if len(ki.Unknown) != 0 {
			t.Errorf("kernel %d: unknown records %v", i, ki.Unknown)
		}
	}
	// Rewriting what was read gives the same bytes.
	var again []Kernel
	for _, ki := range c.Kernels {
		again = append(again, ki.Kernel)
	}
	b2, err := Write(86, again...)
	if err != nil || !bytes.Equal(b, b2) {
		t.Errorf("rewrite differs (err %v)", err)
	}
	// Parameter records in descending ordinal order, at 0x160-relative
	// offsets.
	var ords, offs []int
	for _, r := range c.Kernels[2].Info {
		if r.Attr == AttrKParamInfo {
			p, err := ParseKParamInfo(r)
			if err != nil {
				t.Fatal(err)
			}
			ords, offs = append(ords, p.Ordinal), append(offs, p.Offset)
		}
	}
	if !reflect.DeepEqual(ords, []int{1, 0}) || !reflect.DeepEqual(offs, []int{16, 0}) {
		t.Errorf("KPARAM_INFO ordinals %v offsets %v", ords, offs)
	}
}

// TestInfoRecords checks the record encoding against bytes ptxas 11.8 wrote
// for add.ptx's kernel (.nv.info.add_f32, sm_86; its .nv.constant0 is
// symbol 2).
func TestInfoRecords(t *testing.T) {
	ptxas, _ := hex.DecodeString("0437040076000000013500000" +
		"40a080002000000600118000319180004170c00000000000200100000f0210004170c0000000000010008" +
		"0000f0210004170c00000000000000000000f02100031bff00041c0400b0000000")
	recs, err := ParseInfo(ptxas)
	if err != nil {
		t.Fatal(err)
	}
	var attrs []string
	for _, r := range recs {
		attrs = append(attrs, r.Attr.String())
	}
	want := []string{"EIATTR_CUDA_API_VERSION", "EIATTR_SW2861232_WAR", "EIATTR_PARAM_CBANK", "EIATTR_CBANK_PARAM_SIZE",
		"EIATTR_KPARAM_INFO", "EIATTR_KPARAM_INFO", "EIATTR_KPARAM_INFO", "EIATTR_MAXREG_COUNT", "EIATTR_EXIT_INSTR_OFFSETS"}
	if !reflect.DeepEqual(attrs, want) {
		t.Fatalf("attributes %v", attrs)
	}
	if !bytes.Equal(EncodeInfo(recs), ptxas) {
		t.Errorf("EncodeInfo(ParseInfo(b)) != b")
	}
	k := Kernel{Name: "add_f32", Code: make([]byte, 16), Params: []Param{ptr(), ptr(), ptr()}, Registers: 12, ExitOffsets: []int{0xb0}}
	k.Code = make([]byte, 0x180)
	offs, size, _ := ParamLayout(k.Params)
	if got := EncodeInfo(kernelInfo(86, &k, offs, size, 2)); !bytes.Equal(got, ptxas) {
		t.Errorf("kernelInfo:\n got %x\nwant %x", got, ptxas)
	}
	for _, bad := range []string{"04", "04170c00000000", "09170000"} {
		b, _ := hex.DecodeString(bad)
		if _, err := ParseInfo(b); err == nil {
			t.Errorf("ParseInfo(%s): no error", bad)
		}
	}
	if InfoAttr(0xee).String() != "EIATTR_0xee" {
		t.Errorf("unknown attribute prints %q", InfoAttr(0xee).String())
	}
}

func TestWriteCubinErrors(t *testing.T) {
	good := testKernels()[0]
	cases := map[string]func(k *Kernel){
		"empty name":       func(k *Kernel) { k.Name = "" },
		"name with space":  func(k *Kernel) { k.Name = "a b" },
		"no code":          func(k *Kernel) { k.Code = nil },
		"ragged code":      func(k *Kernel) { k.Code = k.Code[:20] },
		"no registers":     func(k *Kernel) { k.Registers = 0 },
		"256 registers":    func(k *Kernel) { k.Registers = 256 },
		"maxreg":           func(k *Kernel) { k.MaxRegisters = 300 },
		"17 barriers":      func(k *Kernel) { k.Barriers = 17 },
		"negative shared":  func(k *Kernel) { k.SharedStatic = -1 },
		"too much shared":  func(k *Kernel) { k.SharedStatic = MaxSharedBytes + 1 },
		"shared align 3":   func(k *Kernel) { k.SharedAlign = 3 },
		"frame":            func(k *Kernel) { k.FrameSize = 3 },
		"exit past code":   func(k *Kernel) { k.ExitOffsets = []int{len(k.Code)} },
		"exit misaligned":  func(k *Kernel) { k.ExitOffsets = []int{8} },
		"exit unsorted":    func(k *Kernel) { k.ExitOffsets = []int{0x60, 0x50} },
		"coop negative":    func(k *Kernel) { k.CoopOffsets = []int{-16} },
		"bad param":        func(k *Kernel) { k.Params = []Param{{Size: 4, Align: 6}} },
		"block too big":    func(k *Kernel) { k.MaxThreads = [3]int{1024, 2, 1} },
		"block zero dim":   func(k *Kernel) { k.ReqThreads = [3]int{64, 0, 1} },
		"max and req ntid": func(k *Kernel) { k.MaxThreads, k.ReqThreads = [3]int{64, 1, 1}, [3]int{64, 1, 1} },
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		k := good
		cases[n](&k)
		if _, err := Write(86, k); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", n, err)
		}
	}
	if _, err := Write(80, good); !errors.Is(err, ErrInvalid) {
		t.Errorf("sm_80: error %v, want ErrInvalid", err)
	}
	if _, err := Write(86); !errors.Is(err, ErrInvalid) {
		t.Errorf("no kernels: error %v, want ErrInvalid", err)
	}
	if _, err := Write(86, good, good); !errors.Is(err, ErrInvalid) {
		t.Errorf("duplicate kernel: error %v, want ErrInvalid", err)
	}
	if _, err := Read([]byte("not an ELF file")); !errors.Is(err, ErrFormat) {
		t.Errorf("Read(garbage): error %v, want ErrFormat", err)
	}
}

func TestDynamicSharedSection(t *testing.T) {
	// Static shared memory of a kernel that also uses dynamic shared memory
	// is rounded up to the alignment, where the dynamic memory starts (ptxas
	// writes 0x70 for 100 static bytes and .extern .shared .align 16).
	k := Kernel{Name: "k", Code: make([]byte, 32), Registers: 4, SharedStatic: 100, SharedAlign: 16, DynamicShared: true}
	b, err := Write(86, k)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	if sh := c.Section(".nv.shared.k"); sh == nil || sh.Size != 0x70 || sh.Align != 16 {
		t.Errorf(".nv.shared.k: %+v", sh)
	}
	if got := c.Kernels[0].Kernel; got.SharedStatic != 0x70 || got.DynamicShared {
		t.Errorf("read back %+v", describe(got))
	}
}

func TestReadCubinCorrupt(t *testing.T) {
	b, err := Write(86, testKernels()...)
	if err != nil {
		t.Fatal(err)
	}
	// Truncations and single-byte changes must give errors or cubins, never
	// panics.
	for n := 0; n < len(b); n += 7 {
		if _, err := Read(b[:n]); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("truncated to %d bytes: error %v does not wrap ErrFormat", n, err)
		}
	}
	for i := 0; i < len(b); i += 5 {
		c := append([]byte(nil), b...)
		c[i] ^= 0xa5
		if _, err := Read(c); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("byte %d changed: error %v does not wrap ErrFormat", i, err)
		}
	}
}

package sasskit

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// TestBuilderBranches: labels before and after a branch resolve to the
// byte offsets the branch encodes (relative to the next instruction); a
// missing label is an error.
func TestBuilderBranches(t *testing.T) {
	var b Builder
	b.Label("top")
	b.Add(Mov(1, Imm(7)))
	b.BranchTo("end")
	b.Add(sass.New("BRA", "", sass.Target(0)))
	b.BranchTo("top")
	b.Add(sass.New("BRA", "", sass.Target(0)))
	b.Label("end")
	b.Exit()
	b.At(sass.New("EXIT", ""))
	if err := b.Resolve(); err != nil {
		t.Fatal(err)
	}
	if got := b.Prog[1].Args[0].Imm; got != 16 {
		t.Errorf("forward branch target %d, want 16", got)
	}
	if got := b.Prog[2].Args[0].Imm; got != -48 {
		t.Errorf("backward branch target %d, want -48", got)
	}
	if got := b.ExitOffsets(); len(got) != 1 || got[0] != 48 {
		t.Errorf("exit offsets %v, want [48]", got)
	}
	if b.Prog[0].Ctrl.Stall != 1 || b.Prog[3].Ctrl.Stall != 0 {
		t.Errorf("stalls %d, %d: Add gives 1, At keeps 0", b.Prog[0].Ctrl.Stall, b.Prog[3].Ctrl.Stall)
	}
	b.BranchTo("nowhere")
	b.Add(sass.New("BRA", "", sass.Target(0)))
	if err := b.Resolve(); err == nil {
		t.Error("a branch to a missing label resolved")
	}
}

// TestFixStalls: a fixed-latency result read by the next instruction gets
// the table's cycles; an independent pair keeps its hand-given stall.
func TestFixStalls(t *testing.T) {
	lat := sched.DefaultLatencies()
	var b Builder
	b.Add(IAdd(2, R(0), R(1)), IAdd(3, R(2), R(1)), IAdd(4, R(0), R(1)).Stall(5), IAdd(5, R(1), R(0)))
	if err := b.FixStalls(lat); err != nil {
		t.Fatal(err)
	}
	d0, _ := sass.DepsOf(b.Prog[0])
	d1, _ := sass.DepsOf(b.Prog[1])
	if want := lat.Need(d0.Class, d1.Class); int(b.Prog[0].Ctrl.Stall) < want || want <= 1 {
		t.Errorf("dependent stall %d, want at least %d (> 1)", b.Prog[0].Ctrl.Stall, want)
	}
	if b.Prog[2].Ctrl.Stall != 5 {
		t.Errorf("hand-given stall became %d, want 5", b.Prog[2].Ctrl.Stall)
	}
}

// TestWaits: the wait mask of scoreboards.
func TestWaits(t *testing.T) {
	if got := Waits(0, 2, 5); got != 0b100101 {
		t.Errorf("Waits(0, 2, 5) = %#b", got)
	}
	if got := Waits(); got != 0 {
		t.Errorf("Waits() = %#b", got)
	}
}

// TestWriteCubins: one file an architecture; a nil result removes a stale
// file; an error names the architecture and writes nothing more.
func TestWriteCubins(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "m.sm_89.cubin")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteCubins(dir, "m", []int{86, 89}, func(arch int) ([]byte, error) {
		if arch == 89 {
			return nil, nil
		}
		return []byte{byte(arch)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "m.sm_86.cubin")); err != nil || len(b) != 1 || b[0] != 86 {
		t.Errorf("sm_86 file %v, %v", b, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale sm_89 file was kept (%v)", err)
	}
	bad := errors.New("bad")
	if err := WriteCubins(dir, "m", []int{80}, func(int) ([]byte, error) { return nil, bad }); !errors.Is(err, bad) {
		t.Errorf("error %v, want one wrapping %v", err, bad)
	}
}

// TestKernel: the description keeps its fields and gets the encoded code;
// an instruction the model cannot encode is an error.
func TestKernel(t *testing.T) {
	k, err := Kernel(sass.Program{sass.New("EXIT", ""), sass.New("NOP", "")}, cubin.Kernel{Name: "k", Registers: 8})
	if err != nil || k.Name != "k" || k.Registers != 8 || len(k.Code) != 32 {
		t.Errorf("Kernel: %+v, %v", k, err)
	}
	if _, err := Kernel(sass.Program{sass.New("NOSUCHOP", "")}, cubin.Kernel{Name: "bad"}); !errors.Is(err, sass.ErrUnknownOp) {
		t.Errorf("unknown op: %v, want sass.ErrUnknownOp", err)
	}
}

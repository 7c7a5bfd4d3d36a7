package sim

import (
	"errors"
	"testing"
)

// TestHostileNilReceivers: every exported method of Memory, Simulator and
// Fault answers on a nil receiver (an error wrapping ErrConfig, or the
// empty answer) instead of panicking.
func TestHostileNilReceivers(t *testing.T) {
	var m *Memory
	if err := m.Map("x", 0x1000, make([]byte, 16)); !errors.Is(err, ErrConfig) {
		t.Errorf("Map: %v", err)
	}
	if _, err := m.Alloc("x", 16); !errors.Is(err, ErrConfig) {
		t.Errorf("Alloc: %v", err)
	}
	if _, err := m.Unmap(0x1000); !errors.Is(err, ErrConfig) {
		t.Errorf("Unmap: %v", err)
	}
	if m.Bytes("x") != nil || m.Addr("x") != 0 {
		t.Error("Bytes or Addr of a nil Memory")
	}
	if _, _, ok := m.Locate(0x1000); ok {
		t.Error("Locate found a region in a nil Memory")
	}
	var s *Simulator
	if len(s.Unsupported()) != 0 {
		t.Error("a nil Simulator has unsupported instructions")
	}
	if _, err := s.Launch(Config{Grid: [3]int{1, 1, 1}, Block: [3]int{32, 1, 1}}); !errors.Is(err, ErrConfig) {
		t.Errorf("Launch: %v", err)
	}
	var f *Fault
	if f.Error() == "" || f.Unwrap() != nil {
		t.Errorf("a nil Fault: %q, %v", f.Error(), f.Unwrap())
	}
}

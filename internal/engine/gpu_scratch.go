package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tcrt-go/tcrt/runtime/backend"
)

// planReason turns a kernel package's plan error into the reason Explain
// shows: the text after the package's sentinel (not-covered) prefix.
func planReason(err, sentinel error) error {
	if err == nil || !errors.Is(err, sentinel) {
		return err
	}
	return errors.New(strings.TrimPrefix(err.Error(), sentinel.Error()+": "))
}

// scratch is the device memory a GPU call allocates for itself (uploaded
// host arrays, workspaces, position lists). release frees it; enqueued on
// the call's stream after its kernels, it runs once they are done.
type scratch struct {
	rt   *Runtime
	mems []backend.Memory
}

// alloc returns the device address of n fresh bytes (at least 16).
func (s *scratch) alloc(n int) (uint64, error) {
	m, err := s.rt.be.Alloc(max(n, 16))
	if err != nil {
		return 0, err
	}
	s.mems = append(s.mems, m)
	dm, ok := m.(backend.DeviceMemory)
	if !ok {
		return 0, fmt.Errorf("tcrt: scratch memory of the %s backend has no device address: %w", s.rt.Backend(), ErrUnsupported)
	}
	return dm.DevicePtr(), nil
}

// upload returns the device address of a fresh copy of b.
func (s *scratch) upload(ctx context.Context, b []byte) (uint64, error) {
	p, err := s.alloc(len(b))
	if err != nil {
		return 0, err
	}
	return p, s.mems[len(s.mems)-1].Write(ctx, 0, b)
}

// release frees everything allocated.
func (s *scratch) release() error {
	var errs []error
	for _, m := range s.mems {
		errs = append(errs, m.Free())
	}
	s.mems = nil
	return errors.Join(errs...)
}

package sasscheck

import (
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/sim"
)

// SimCache holds one simulator per kernel variant K, built on first use
// (building one decodes the whole program). The zero value is ready; it is
// safe for parallel tests.
type SimCache[K comparable] struct {
	mu sync.Mutex
	m  map[K]*sim.Simulator
}

// Get returns the simulator of variant k, building it from gen's program
// the first time; it fails the test when gen fails or the simulator
// cannot run an instruction. name names the kernel in those failures.
func (c *SimCache[K]) Get(tb testing.TB, k K, name string, gen func() (sass.Program, error)) *sim.Simulator {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.m[k]; s != nil {
		return s
	}
	p, err := gen()
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	s, err := sim.New(p)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	if u := s.Unsupported(); len(u) > 0 {
		tb.Fatalf("%s: simulator cannot run: %v", name, u)
	}
	if c.m == nil {
		c.m = map[K]*sim.Simulator{}
	}
	c.m[k] = s
	return s
}

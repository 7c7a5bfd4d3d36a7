package engine

import "github.com/tcrt-go/tcrt/runtime/backend"

// PoolStats are the device-memory pool's numbers (GPU backends; zero on the
// CPU backend, which has no pool).
type PoolStats = backend.PoolStats

// PoolStats returns the device-memory pool's numbers; zero on a backend
// without a pool (the CPU).
func (r *Runtime) PoolStats() PoolStats {
	if r == nil {
		return PoolStats{}
	}
	if pb, ok := r.be.(backend.Pooled); ok {
		return pb.PoolStats()
	}
	return PoolStats{}
}

// TrimPool waits for the device, then returns the pool's cached free
// segments to it, and reports the bytes released (0 without a pool).
func (r *Runtime) TrimPool() (int64, error) {
	if err := r.checkOpen("trim pool"); err != nil {
		return 0, err
	}
	if pb, ok := r.be.(backend.Pooled); ok {
		return pb.TrimPool()
	}
	return 0, nil
}

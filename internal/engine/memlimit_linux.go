package engine

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// cgroupLimitFiles are the memory-limit files of cgroup v2 and v1, as seen
// from inside the process's own cgroup namespace.
var cgroupLimitFiles = []string{
	"/sys/fs/cgroup/memory.max",
	"/sys/fs/cgroup/memory/memory.limit_in_bytes",
}

// hostMemoryBytes is the least of the physical memory, the cgroup's limit,
// the address-space and data rlimits and Go's own memory limit (GOMEMLIMIT
// or debug.SetMemoryLimit), read once.
var hostMemoryBytes = sync.OnceValue(func() int64 {
	var si syscall.Sysinfo_t
	total := int64(0)
	if syscall.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	lower := func(n int64) {
		if n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	for _, res := range []int{syscall.RLIMIT_AS, syscall.RLIMIT_DATA} {
		var rl syscall.Rlimit
		if syscall.Getrlimit(res, &rl) == nil && rl.Cur < math.MaxInt64 {
			lower(int64(rl.Cur))
		}
	}
	if gl := debug.SetMemoryLimit(-1); gl < math.MaxInt64 {
		lower(gl)
	}
	for _, f := range cgroupLimitFiles {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// "max" (v2) or a huge number (v1) mean unlimited.
		if n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil {
			lower(n)
		}
	}
	return total
})

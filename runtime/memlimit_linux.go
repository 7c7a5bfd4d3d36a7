package runtime

import (
	"os"
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

var hostMemoryBytes = sync.OnceValue(func() int64 {
	var si syscall.Sysinfo_t
	total := int64(0)
	if syscall.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	for _, f := range cgroupLimitFiles {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// "max" (v2) or a huge number (v1) mean unlimited.
		n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
})

package llama_test

import "syscall"

// freeDisk is the bytes free to unprivileged users in dir's file system
// (0 if unknown).
func freeDisk(dir string) uint64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

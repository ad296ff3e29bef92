//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// ProtectRunner marks the calling process not dumpable
// (prctl(PR_SET_DUMPABLE, 0)): its /proc/<pid>/environ, mem, maps and fd
// entries become owned by root and unreadable to other processes of the
// same uid, and processes of the same uid can no longer ptrace it. Programs
// are already denied open(2) and ptrace(2) by the seccomp filter; this is
// the second lock on the runner's environment (its API key). Call it once,
// early, in the runner.
func ProtectRunner() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

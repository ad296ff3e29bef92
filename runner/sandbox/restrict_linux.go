//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ExecRestricted replaces the process with argv under no_new_privs and the
// RuntimeDefaultProgram filter, as a container runtime starts a container
// with allowPrivilegeEscalation: false and seccompProfile RuntimeDefault.
// It returns only on failure.
func ExecRestricted(argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("restrict: no command")
	}
	exe, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("restrict: %w", err)
	}
	filter, err := RuntimeDefaultProgram()
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("restrict: no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&filter[0]))}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("restrict: seccomp: %w", e)
	}
	runtime.KeepAlive(filter)
	return syscall.Exec(exe, argv, os.Environ())
}

package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// maxIPBlocks bounds the second octet of pod IPs handed to local clusters.
const maxIPBlocks = 200

// AcquireIPBlock reserves a /16 of 127.0.0.0/8 for one local cluster's pod
// IPs (127.B.0.0/16) for as long as this process lives, so that two local
// clusters on one machine (a demo while the e2e tests run) never give two
// pods the same address. The reservation is an flock on a file in the
// temporary dir: the kernel releases it when the process dies.
func AcquireIPBlock() (int, func(), error) {
	dir := filepath.Join(os.TempDir(), "repot-localcluster-ip-blocks")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, nil, err
	}
	// Shared by every user's clusters, like /tmp itself (best effort: only
	// the creator may change the mode).
	_ = os.Chmod(dir, 0o777|os.ModeSticky)
	for b := 0; b < maxIPBlocks; b++ {
		// Read-only is enough for flock, and lets a user lock a file that
		// another user created.
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.lock", b)), os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return 0, nil, err
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return b, func() { f.Close() }, nil
		}
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return 0, nil, err
		}
	}
	return 0, nil, fmt.Errorf("all %d pod IP blocks of 127.0.0.0/8 are taken by running local clusters", maxIPBlocks)
}

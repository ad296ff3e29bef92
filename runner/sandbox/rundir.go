package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// runDirs hands out the fresh, empty directory each program runs in. It
// makes the next directories ahead of time and removes used ones in the
// background, so that neither the mkdir nor the removal (each some tenths
// of a millisecond on a busy disk) is on a program's critical path.
type runDirs struct {
	parent string
	owner  int // uid and gid to own each directory, or -1
	ready  chan string

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// newRunDirs keeps up to ahead directories ready under parent ("" is the
// system's temp dir).
func newRunDirs(parent string, owner, ahead int) *runDirs {
	return &runDirs{parent: parent, owner: owner, ready: make(chan string, max(ahead, 1))}
}

// get returns a new directory: one made ahead, or one made now.
func (d *runDirs) get() (string, error) {
	select {
	case dir := <-d.ready:
		return dir, nil
	default:
		return d.make()
	}
}

// release removes dir, which get returned, and makes the next directory;
// both in the background.
func (d *runDirs) release(dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		removeDir(dir)
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		removeDir(dir)
		next, err := d.make()
		if err != nil {
			return // get makes one, and reports the error, when it is needed
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if !d.closed {
			select {
			case d.ready <- next:
				return
			default: // enough are ready
			}
		}
		removeDir(next)
	}()
}

// close waits for background work and removes the directories made ahead.
func (d *runDirs) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.wg.Wait()
	for {
		select {
		case dir := <-d.ready:
			removeDir(dir)
		default:
			return
		}
	}
}

func (d *runDirs) make() (string, error) {
	dir, err := os.MkdirTemp(d.parent, "repot-sandbox-")
	if err != nil {
		return "", fmt.Errorf("sandbox: temp dir: %w", err)
	}
	if d.owner >= 0 {
		if err := os.Chown(dir, d.owner, d.owner); err != nil {
			removeDir(dir)
			return "", fmt.Errorf("sandbox: temp dir: %w", err)
		}
	}
	return dir, nil
}

// removeDir removes dir, first making everything in it writable in case the
// program changed permissions.
func removeDir(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

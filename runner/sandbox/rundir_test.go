package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRunDirsAreFreshAndCleanedUp(t *testing.T) {
	parent := t.TempDir()
	d := newRunDirs(parent, -1, 2)
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		dir, err := d.get()
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] {
			t.Fatalf("directory %s handed out twice", dir)
		}
		seen[dir] = true
		// What a program leaves behind goes with its directory.
		if err := os.WriteFile(filepath.Join(dir, "left"), []byte("x"), 0o400); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		d.release(dir)
	}
	if got := len(d.settled()); got < 1 || got > 2 {
		t.Errorf("%d directories made ahead, want 1 or 2 (at most the concurrency)", got)
	}
	last, err := d.get()
	if err != nil {
		t.Fatal(err)
	}
	d.close()
	d.release(last) // a run that ends after close still cleans up
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind after close: %s", e.Name())
	}
}

package ledger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"repot.dev/repot-operator/contract"
)

// Restore writes the ledger's records into path (creating its directory), so
// that `repot run --resume` skips the runs the ledger already holds. The file
// is replaced atomically. It returns the number of lines written. It also
// writes the ledger's budget cap beside path (contract.BudgetCapFile; no
// file when the ledger has none), so the run starts under its cap.
func Restore(ctx context.Context, s *Store, path string) (int, error) {
	text, err := s.Load(ctx)
	if err != nil {
		return 0, err
	}
	// Normalize through Merge: one line per key, valid records re-encoded.
	text, _ = Merge(text, nil)
	if err := writeAtomic(path, []byte(text)); err != nil {
		return 0, err
	}
	if err := restoreBudgetCap(ctx, s, filepath.Join(filepath.Dir(path), contract.BudgetCapFile)); err != nil {
		return 0, fmt.Errorf("budget cap: %w", err)
	}
	return strings.Count(text, "\n"), nil
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".restore-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

package repot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"repot.dev/repot-operator/contract"
)

// ledgerWait is `repot run --await-ledger`'s hand-off to the runner pod's
// ledger-sync sidecar: once the last record is in the records file, the
// runner writes DIR/run.done; the sidecar writes every record to the ledger
// and answers in DIR/ledger.synced, "ok" or "failed: <why>". The runner's
// exit status carries the answer: a ledger that lacks records fails the
// pod, so its Job runs the shard again, and the new pod's ledger-restore
// and --resume pick up from what the ledger holds. (The sidecar's own exit
// status cannot do this: a native sidecar's exit never fails its pod.)
type ledgerWait struct {
	dir     string
	timeout time.Duration
	now     func() time.Time
	// sleep waits d or until ctx ends.
	sleep func(ctx context.Context, d time.Duration)
}

// pollLedger is how often the runner looks for the sidecar's answer.
const pollLedger = 250 * time.Millisecond

func newLedgerWait(dir string, timeout time.Duration) *ledgerWait {
	return &ledgerWait{dir: dir, timeout: timeout, now: time.Now, sleep: func(ctx context.Context, d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}}
}

// await writes the done file and waits for the answer; nil only for "ok".
func (w *ledgerWait) await(ctx context.Context) error {
	synced := filepath.Join(w.dir, contract.LedgerSyncedFile)
	// A stale answer (a reused output directory) must not be taken for this
	// run's.
	if err := os.Remove(synced); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ledger hand-off: %w", err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, contract.RunDoneFile), []byte(contract.RunDoneContent), 0o644); err != nil {
		return fmt.Errorf("ledger hand-off: %w", err)
	}
	deadline := w.now().Add(w.timeout)
	for {
		b, err := os.ReadFile(synced)
		switch {
		case err == nil:
			ok, answer := contract.ParseSynced(b)
			if ok {
				return nil
			}
			return fmt.Errorf("the ledger lacks records of this shard (ledger-sync: %s); the pod fails so that the Job runs the shard again and resumes from the ledger", answer)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("ledger hand-off: %w", err)
		}
		if ctx.Err() != nil || !w.now().Before(deadline) {
			return fmt.Errorf("the ledger-sync sidecar did not confirm within %v that the ledger holds every record (no %s); the pod fails so that the Job runs the shard again and resumes from the ledger", w.timeout, synced)
		}
		w.sleep(ctx, pollLedger)
	}
}

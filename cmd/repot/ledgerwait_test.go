package repot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repot.dev/repot-operator/contract"
)

func TestLedgerWait(t *testing.T) {
	tests := []struct {
		name   string
		answer string // what the sidecar answers once run.done exists; "" never
		stale  string // an answer left from an earlier run
		err    string // "" for success
	}{
		{"every record stored", "ok\n", "", ""},
		{"a full ledger", "failed: ledger full: 3 records do not fit\n", "", "ledger full: 3 records do not fit"},
		{"no answer", "", "", "did not confirm within 1m0s"},
		{"a stale ok is not this run's answer", "", "ok\n", "did not confirm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			synced := filepath.Join(dir, contract.LedgerSyncedFile)
			if tt.stale != "" {
				if err := os.WriteFile(synced, []byte(tt.stale), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			w := &ledgerWait{dir: dir, timeout: time.Minute, now: func() time.Time { return now },
				// The sidecar: it answers on the first poll after run.done.
				sleep: func(_ context.Context, d time.Duration) {
					if _, err := os.Stat(filepath.Join(dir, contract.RunDoneFile)); err != nil {
						t.Errorf("waiting without having written %s", contract.RunDoneFile)
					}
					if tt.answer != "" {
						if err := os.WriteFile(synced, []byte(tt.answer), 0o644); err != nil {
							t.Error(err)
						}
					}
					now = now.Add(d)
				}}
			err := w.await(context.Background())
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("await = %v; want nil", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("await = %v; want an error with %q", err, tt.err)
			}
		})
	}
}

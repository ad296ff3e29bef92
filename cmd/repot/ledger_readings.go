package repot

import (
	"context"

	"repot.dev/repot-operator/runner/ledger"
)

// startReadingsSync copies the GPU readings file into the ledger alongside
// the records (nothing when path is empty). The returned function waits for
// the final write after ctx ends and returns its error.
func startReadingsSync(ctx context.Context, st *ledger.Store, path string, logf func(string, ...any)) func() error {
	if path == "" {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() {
		s := &ledger.ReadingsSyncer{Store: st, Tail: &ledger.LineTail{Path: path}, Logf: logf}
		_, err := s.Run(ctx)
		done <- err
	}()
	return func() error { return <-done }
}

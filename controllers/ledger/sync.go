package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"repot.dev/repot-operator/runner/summary"
)

// Merger stores records; *Store is the real one.
type Merger interface {
	Merge(ctx context.Context, recs []summary.Record) (int, error)
}

// Syncer tails a records file and merges new records into a ledger.
type Syncer struct {
	Store Merger
	Tail  *Tail
	Clock clock.WithTicker
	// Poll is how often the file is read. Default 1s.
	Poll time.Duration
	// MaxDelay is how long a record may wait before it is written. Default 5s.
	MaxDelay time.Duration
	// Batch writes as soon as this many records wait. Default 25.
	Batch int
	// FinalTimeout bounds the last write after ctx is cancelled (SIGTERM).
	// Default 20s; keep it below the pod's termination grace period.
	FinalTimeout time.Duration
	// Logf reports bad lines and failed writes; nil discards.
	Logf func(format string, args ...any)

	// polled, when set (tests), runs after each poll has been handled.
	polled func()

	// ModeFile, when set, is the runner's sandbox mode file; its content
	// is copied once onto the ledger (SandboxModeAnnotation).
	ModeFile string
	modeDone bool

	// ProvenanceFile, when set, is the runner's provenance file; it is
	// copied once onto the ledger (ProvenanceAnnotation).
	ProvenanceFile string
	provenanceDone bool

	pending []summary.Record
	since   time.Time // when the oldest pending record was read
	written int
	dropped int // records a full ledger refused (they stay in the file)
}

func (s *Syncer) defaults() {
	if s.Clock == nil {
		s.Clock = clock.RealClock{}
	}
	if s.Poll <= 0 {
		s.Poll = time.Second
	}
	if s.MaxDelay <= 0 {
		s.MaxDelay = 5 * time.Second
	}
	if s.Batch <= 0 {
		s.Batch = 25
	}
	if s.FinalTimeout <= 0 {
		s.FinalTimeout = 20 * time.Second
	}
	if s.Logf == nil {
		s.Logf = func(string, ...any) {}
	}
}

// Run syncs until ctx is cancelled, then reads the file a last time and
// writes everything still pending. It returns the error of that final write
// (records it could not store are lost to the ledger but stay in the file);
// failed writes before it are logged and retried on the next poll, except
// when the ledger is full (ErrLedgerFull): retrying those records cannot
// succeed, so they are dropped from the ledger's queue, and Run returns an
// error at the end that counts them.
func (s *Syncer) Run(ctx context.Context) (written int, err error) {
	s.defaults()
	t := s.Clock.NewTicker(s.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.final()
		case <-t.C():
			s.syncMode(ctx)
			s.syncProvenance(ctx)
			s.read()
			if len(s.pending) >= s.Batch || (len(s.pending) > 0 && s.Clock.Since(s.since) >= s.MaxDelay) {
				if err := s.flush(ctx); err != nil && ctx.Err() == nil {
					retry := "will retry"
					if errors.Is(err, ErrLedgerFull) {
						retry = "not retried; the records stay in the file"
					}
					s.Logf("ledger: %v (%s)", err, retry)
				}
			}
			if s.polled != nil {
				s.polled()
			}
		}
	}
}

func (s *Syncer) final() (int, error) {
	s.read()
	ctx, cancel := context.WithTimeout(context.Background(), s.FinalTimeout)
	defer cancel()
	s.syncMode(ctx)
	s.syncProvenance(ctx)
	err := s.flush(ctx)
	if err == nil && s.dropped > 0 {
		err = fmt.Errorf("%w: %d records could not be stored in the ledger (they are only in %s)", ErrLedgerFull, s.dropped, s.Tail.Path)
	}
	return s.written, err
}

func (s *Syncer) read() {
	recs, bad, err := s.Tail.Next()
	if err != nil {
		s.Logf("ledger: reading %s: %v", s.Tail.Path, err)
		return
	}
	for _, b := range bad {
		s.Logf("ledger: skipping %v", b)
	}
	if len(recs) > 0 && len(s.pending) == 0 {
		s.since = s.Clock.Now()
	}
	s.pending = append(s.pending, recs...)
}

func (s *Syncer) flush(ctx context.Context) error {
	if len(s.pending) == 0 {
		return nil
	}
	if _, err := s.Store.Merge(ctx, s.pending); err != nil {
		if errors.Is(err, ErrLedgerFull) {
			s.dropped += len(s.pending)
			s.pending = nil
		}
		return err
	}
	s.written += len(s.pending)
	s.pending = nil
	return nil
}

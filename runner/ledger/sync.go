package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/utils/clock"

	"repot.dev/repot-operator/contract"
)

// Merger stores records; *Store is the real one.
type Merger interface {
	Merge(ctx context.Context, recs []contract.Record) (int, error)
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
	// is copied once onto the ledger (contract.LedgerSandboxModeAnnotation).
	ModeFile string
	modeDone bool

	// ProvenanceFile, when set, is the runner's provenance file; it is
	// copied once onto the ledger (contract.LedgerProvenanceAnnotation).
	ProvenanceFile string
	provenanceDone bool

	// DoneFile and SyncedFile, when set, are the hand-off with `repot run
	// --await-ledger` (contract.RunDoneFile, contract.LedgerSyncedFile): once
	// DoneFile exists, the poll that sees it writes every record of the
	// file to the ledger and answers in SyncedFile "ok", or "failed: " and
	// why when a full ledger refuses records or the writes keep failing
	// for FinalTimeout. The runner exits non-zero unless it reads "ok".
	DoneFile, SyncedFile string
	doneSince            time.Time // when DoneFile was first seen
	answered             bool

	// CapFile, when set, is the runner's budget cap file
	// (contract.BudgetCapFile): the ledger's budget cap
	// (contract.LedgerBudgetCapAnnotation) is read every CapEvery (default
	// DefaultCapEvery) and written there when it changed; no annotation
	// removes the file (no cap).
	CapFile    string
	CapEvery   time.Duration
	capRead    time.Time
	capSynced  bool
	capValue   string
	capPresent bool

	// Traces, when set, uploads the runner's traces to the artifact store
	// before each ledger write (traces.go).
	Traces            TraceUploader
	tracesFinished    bool
	tracesErr         string
	tracesAnnotated   string
	tracesAnnotatedAt time.Time

	pending []contract.Record
	since   time.Time // when the oldest pending record was read
	written int
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
// (records it could not store are not in the ledger but stay in the file,
// and the error makes the container, and so the pod, fail). A failed write
// before it is logged and retried on the next poll; no record is ever
// dropped from the queue: a full ledger spills into its spill ConfigMaps
// (Store.Merge), and what fits in none of them (a *FullError) stays
// pending, so the final write fails and says how many records are left.
func (s *Syncer) Run(ctx context.Context) (written int, err error) {
	s.defaults()
	t := s.Clock.NewTicker(s.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.final()
		case <-t.C():
			s.syncCap(ctx)
			s.syncMode(ctx)
			s.syncProvenance(ctx)
			// Look for the done file before reading the records, so every
			// record written before it is read on this poll.
			done := s.runDone()
			s.read()
			if done {
				s.answer(ctx)
			} else if len(s.pending) >= s.Batch || (len(s.pending) > 0 && s.Clock.Since(s.since) >= s.MaxDelay) {
				if err := s.flush(ctx); err != nil && ctx.Err() == nil {
					s.Logf("ledger: %v (will retry; the records stay in %s)", err, s.Tail.Path)
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
	s.finishTraces(ctx)
	err := s.flush(ctx)
	if err != nil {
		err = fmt.Errorf("%w (%d records are only in %s)", err, len(s.pending), s.Tail.Path)
	}
	return s.written, err
}

// runDone reports whether the runner wrote DoneFile (and no answer was
// given yet).
func (s *Syncer) runDone() bool {
	if s.DoneFile == "" || s.answered {
		return false
	}
	if _, err := os.Stat(s.DoneFile); err != nil {
		return false
	}
	if s.doneSince.IsZero() {
		s.doneSince = s.Clock.Now()
	}
	return true
}

// answer writes what is pending and answers the runner: "ok" when nothing
// is left, "failed: ..." when a full ledger refused records (retrying
// cannot help) or the writes failed for FinalTimeout since the done file
// appeared; after any other failure the next poll tries again.
func (s *Syncer) answer(ctx context.Context) {
	s.finishTraces(ctx)
	err := s.flush(ctx)
	var full *FullError
	switch {
	case err == nil:
		s.reply(contract.LedgerSyncedOK)
	case errors.As(err, &full) || s.Clock.Since(s.doneSince) >= s.FinalTimeout:
		s.reply(contract.SyncedFailed(fmt.Sprintf("%v (%d records are only in %s)", err, len(s.pending), s.Tail.Path)))
	default:
		s.Logf("ledger: %v (will retry before answering the runner)", err)
	}
}

func (s *Syncer) reply(text string) {
	if err := writeAtomic(s.SyncedFile, []byte(text+"\n")); err != nil {
		s.Logf("ledger: answering the runner in %s: %v (will retry)", s.SyncedFile, err)
		return
	}
	s.answered = true
	s.Logf("ledger: answered the runner: %s", text)
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
	s.syncTraces(ctx)
	if _, err := s.Store.Merge(ctx, s.pending); err != nil {
		// Records a full ledger could not take stay pending, in order;
		// the others are stored. After any other error all stay pending
		// (merging again is harmless: the merge is by key).
		var full *FullError
		if errors.As(err, &full) {
			s.written += len(s.pending) - len(full.Left)
			s.pending = full.Left
		}
		return err
	}
	s.written += len(s.pending)
	s.pending = nil
	return nil
}

package ledger

import (
	"context"
	"encoding/json"
	"time"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/contract"
)

// maxTraceSync bounds one upload before a ledger write.
const maxTraceSync = time.Minute

// TraceUploader puts the runner's traces in the artifact store;
// *s3.ShardUploader is the real one.
type TraceUploader interface {
	// Sync uploads the traces written so far (after a failure it waits out
	// a backoff and returns the last error).
	Sync(ctx context.Context) error
	// Finish uploads what is left, retrying until ctx ends, and marks the
	// shard's manifest final.
	Finish(ctx context.Context) (artifacts.Progress, error)
	Progress() artifacts.Progress
}

// syncTraces runs before every ledger write: the engine appends a run's
// trace before its record, so once it returns nil every record read so far
// has its trace in the store, and a runner killed after the write loses no
// recorded run's trace. A failing store never holds the records back:
// their traces wait in the file and go up with a later poll.
func (s *Syncer) syncTraces(ctx context.Context) {
	if s.Traces == nil || s.tracesFinished {
		return
	}
	// A store that accepts connections and then hangs must not hold the
	// records back for long: the upload gives up after maxTraceSync and
	// goes on with a later poll.
	sctx, cancel := context.WithTimeout(ctx, maxTraceSync)
	defer cancel()
	err := s.Traces.Sync(sctx)
	switch {
	case err != nil && err.Error() != s.tracesErr:
		s.Logf("artifacts: %v (traces wait in the runner's file)", err)
		s.tracesErr = err.Error()
	case err == nil && s.tracesErr != "":
		s.Logf("artifacts: the store answers again")
		s.tracesErr = ""
	}
	s.annotateTraces(ctx)
}

// finishTraces uploads the rest and marks the shard final, with half of
// the final timeout, so that the records' last write keeps the other half.
func (s *Syncer) finishTraces(ctx context.Context) {
	if s.Traces == nil || s.tracesFinished {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, s.FinalTimeout/2)
	defer cancel()
	if _, err := s.Traces.Finish(fctx); err != nil {
		s.Logf("artifacts: final upload: %v", err)
	}
	s.tracesFinished = true
	s.annotateTraces(ctx)
}

// annotateTraces copies the upload progress onto the ledger when it
// changed, at most every few seconds unless final.
func (s *Syncer) annotateTraces(ctx context.Context) {
	a, ok := s.Store.(Annotator)
	if !ok {
		return
	}
	p := s.Traces.Progress()
	b, err := json.Marshal(p)
	if err != nil || string(b) == s.tracesAnnotated {
		return
	}
	if !p.Final && !s.tracesAnnotatedAt.IsZero() && s.Clock.Since(s.tracesAnnotatedAt) < 5*time.Second {
		return
	}
	if err := a.Annotate(ctx, contract.LedgerArtifactsAnnotation, string(b)); err != nil {
		s.Logf("ledger: %v (will retry)", err)
		return
	}
	s.tracesAnnotated, s.tracesAnnotatedAt = string(b), s.Clock.Now()
}

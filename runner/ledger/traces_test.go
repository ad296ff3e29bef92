package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
	"repot.dev/repot-operator/artifacts/s3test"
	"repot.dev/repot-operator/contract"
)

// fakeTraces is a TraceUploader that notes what the ledger held at each
// call, so a test can see that traces go up before the records they
// belong to are written.
type fakeTraces struct {
	h        *syncHarness
	fail     error
	atSync   []string // the ledger's records at each Sync
	finished bool
	uploads  int
}

func (f *fakeTraces) Sync(context.Context) error {
	f.atSync = append(f.atSync, f.h.ledger())
	if f.fail != nil {
		return f.fail
	}
	f.uploads++
	return nil
}

func (f *fakeTraces) Finish(ctx context.Context) (artifacts.Progress, error) {
	f.finished = true
	return f.Progress(), f.Sync(ctx)
}

func (f *fakeTraces) Progress() artifacts.Progress {
	return artifacts.Progress{Objects: f.uploads, Final: f.finished}
}

func startTraceSync(t *testing.T) (*syncHarness, *fakeTraces) {
	h := &syncHarness{fake: newFake("led-0", ""), path: t.TempDir() + "/records.jsonl"}
	tr := &fakeTraces{h: h}
	s := &Syncer{
		Store: &Store{Client: h.fake, Name: "led-0"}, Tail: &Tail{Path: h.path},
		Poll: time.Second, MaxDelay: 5 * time.Second, Batch: 2, Traces: tr,
	}
	h.syncRun = runSyncer(t, s, clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	return h, tr
}

func TestSyncUploadsTracesBeforeTheRecords(t *testing.T) {
	h, tr := startTraceSync(t)
	r1, r2 := rec("p1", "pot", true, ""), rec("p2", "pot", false, "")
	appendFile(t, h.path, jsonl(t, r1, r2))
	h.poll()
	if diff := cmp.Diff(jsonl(t, r1, r2), h.ledger()); diff != "" {
		t.Fatalf("ledger after a full batch (-want +got):\n%s", diff)
	}
	// The one Sync ran before the batch was written: the ledger was empty.
	if diff := cmp.Diff([]string{""}, tr.atSync); diff != "" {
		t.Errorf("ledger at each trace sync (-want +got):\n%s", diff)
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if !tr.finished {
		t.Errorf("the final write did not finish the traces")
	}
	var p artifacts.Progress
	if err := json.Unmarshal([]byte(h.fake.objs["led-0"].Annotations[contract.LedgerArtifactsAnnotation]), &p); err != nil {
		t.Fatalf("annotation %s: %v", contract.LedgerArtifactsAnnotation, err)
	}
	if !p.Final {
		t.Errorf("annotated progress %+v, want final", p)
	}
}

func TestSyncWritesRecordsWhileTheStoreFails(t *testing.T) {
	h, tr := startTraceSync(t)
	tr.fail = errors.New("store unreachable")
	r1, r2 := rec("p1", "pot", true, ""), rec("p2", "pot", false, "")
	appendFile(t, h.path, jsonl(t, r1, r2))
	h.poll()
	// The records are not held back: their traces wait in the file.
	if diff := cmp.Diff(jsonl(t, r1, r2), h.ledger()); diff != "" {
		t.Errorf("ledger while the store fails (-want +got):\n%s", diff)
	}
	if err := h.stop(); err != nil {
		t.Fatalf("a failing store failed the final write: %v", err)
	}
}

// TestSyncRecordedRunsHaveStoredTraces runs the real uploader against a
// real S3 server: whenever the ledger holds a record, the store holds its
// run's trace, so a runner pod killed at any point loses no recorded run's
// trace.
func TestSyncRecordedRunsHaveStoredTraces(t *testing.T) {
	srv := s3test.Start(t)
	dir := t.TempDir()
	h := &syncHarness{fake: newFake("led-0", ""), path: filepath.Join(dir, "records.jsonl")}
	layout := artifacts.Layout{Namespace: "ns", Evaluation: "ev", UID: "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"}
	shard := artifacts.Shard{Model: "m", Index: 0}
	st := srv.Open(t, "")
	up := &s3.ShardUploader{Store: st, Layout: layout, Shard: shard, Path: filepath.Join(dir, "traces.jsonl"), StatePath: filepath.Join(dir, "artifacts.state")}
	s := &Syncer{
		Store: &Store{Client: h.fake, Name: "led-0"}, Tail: &Tail{Path: h.path},
		Poll: time.Second, MaxDelay: 5 * time.Second, Batch: 2, Traces: up,
	}
	h.syncRun = runSyncer(t, s, clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))

	var recs []contract.Record
	for i := range 5 {
		// As the engine does: the trace, then the record.
		r := rec(fmt.Sprintf("p%d", i), "pot", i%2 == 0, "")
		tr, _ := json.Marshal(contract.Trace{ProblemID: r.ProblemID, Method: r.Method, Success: r.Success})
		appendFile(t, up.Path, string(tr)+"\n")
		appendFile(t, h.path, jsonl(t, r))
		recs = append(recs, r)
		h.poll()
		// Every record in the ledger has its trace in the store.
		stored := map[string]bool{}
		m, err := s3.Collect(context.Background(), st, layout, []artifacts.Shard{shard})
		if err != nil {
			t.Fatal(err)
		}
		if err := s3.Traces(context.Background(), st, m, func(b []byte) error {
			var tr contract.Trace
			if err := json.Unmarshal(b, &tr); err != nil {
				return err
			}
			stored[tr.ProblemID] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		ledgerRecs, _, err := contract.ReadRecords(strings.NewReader(h.ledger()))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ledgerRecs {
			if !stored[r.ProblemID] {
				t.Errorf("after run %d: %s is in the ledger, its trace is not in the store", i, r.ProblemID)
			}
		}
	}
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	m, err := s3.Collect(context.Background(), st, layout, []artifacts.Shard{shard})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Complete || m.Shards[0].Objects == nil {
		t.Errorf("after the final write: manifest %+v, want complete", m)
	}
	if diff := cmp.Diff(jsonl(t, recs...), h.ledger()); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
}

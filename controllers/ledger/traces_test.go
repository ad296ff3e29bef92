package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"repot.dev/repot-operator/artifacts"
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
	if err := json.Unmarshal([]byte(h.fake.objs["led-0"].Annotations[ArtifactsAnnotation]), &p); err != nil {
		t.Fatalf("annotation %s: %v", ArtifactsAnnotation, err)
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


package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"repot.dev/repot-operator/contract"
)

// syncRun is a Syncer running in the background on a fake clock, one poll
// at a time as the test steps it.
type syncRun struct {
	t      *testing.T
	clock  *clocktesting.FakeClock
	polled chan struct{}
	cancel context.CancelFunc
	done   chan error
	n      int // what Run returned, once done has answered
}

// runSyncer runs s on clock (it sets s.Clock and s.polled) until stop.
func runSyncer(t *testing.T, s *Syncer, clock *clocktesting.FakeClock) *syncRun {
	r := &syncRun{t: t, clock: clock, polled: make(chan struct{}), done: make(chan error, 1)}
	s.Clock, s.polled = clock, func() { r.polled <- struct{}{} }
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		n, err := s.Run(ctx)
		r.n = n
		r.done <- err
	}()
	return r
}

// poll advances the clock by one poll interval (1s) and waits for it to be
// handled.
func (r *syncRun) poll() {
	r.t.Helper()
	for !r.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	r.clock.Step(time.Second)
	<-r.polled
}

// stop cancels the run and returns Run's error.
func (r *syncRun) stop() error {
	r.cancel()
	return <-r.done
}

// syncHarness runs a Syncer on a ledger in a fake API server.
type syncHarness struct {
	*syncRun
	fake *fakeConfigMaps
	path string
}

func startSync(t *testing.T) *syncHarness {
	h := &syncHarness{fake: newFake("led-0", ""), path: filepath.Join(t.TempDir(), "records.jsonl")}
	s := &Syncer{
		Store: &Store{Client: h.fake, Name: "led-0"}, Tail: &Tail{Path: h.path},
		Poll: time.Second, MaxDelay: 5 * time.Second, Batch: 3,
	}
	h.syncRun = runSyncer(t, s, clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	return h
}

func (h *syncHarness) ledger() string {
	got, _ := (&Store{Client: h.fake, Name: "led-0"}).Load(context.Background())
	return got
}

func TestSyncBatchesAndDelay(t *testing.T) {
	h := startSync(t)
	r := func(i int) contract.Record { return rec("p"+string(rune('a'+i)), "pot", i%2 == 0, "") }

	appendFile(t, h.path, jsonl(t, r(0), r(1)))
	for i := 0; i < 5; i++ { // read at 1s; still pending at 5s
		h.poll()
	}
	if h.fake.patches != 0 {
		t.Fatalf("written after %d polls with 2 records pending; want to wait for MaxDelay or a full batch", 5)
	}
	h.poll() // 5s after the records were read
	if diff := cmp.Diff(jsonl(t, r(0), r(1)), h.ledger()); diff != "" {
		t.Fatalf("after MaxDelay (-want +got):\n%s", diff)
	}

	appendFile(t, h.path, jsonl(t, r(2), r(3), r(4)))
	h.poll() // a full batch is written at once
	if diff := cmp.Diff(jsonl(t, r(0), r(1), r(2), r(3), r(4)), h.ledger()); diff != "" {
		t.Fatalf("after a full batch (-want +got):\n%s", diff)
	}

	// A failed write keeps the records and retries on the next poll.
	h.fake.failPatch = errors.New("apiserver unavailable")
	appendFile(t, h.path, jsonl(t, r(5), r(6), r(7)))
	h.poll()
	h.fake.failPatch = nil
	h.poll()
	if diff := cmp.Diff(jsonl(t, r(0), r(1), r(2), r(3), r(4), r(5), r(6), r(7)), h.ledger()); diff != "" {
		t.Fatalf("after a retried write (-want +got):\n%s", diff)
	}

	// SIGTERM (cancel): whatever was appended since is written before exit,
	// including a record written twice, which is stored once.
	appendFile(t, h.path, jsonl(t, r(8), r(8)))
	if err := h.stop(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonl(t, r(0), r(1), r(2), r(3), r(4), r(5), r(6), r(7), r(8)), h.ledger()); diff != "" {
		t.Errorf("after the final flush (-want +got):\n%s", diff)
	}
}

func TestSyncFinalWriteFailureIsReported(t *testing.T) {
	h := startSync(t)
	h.fake.failPatch = errors.New("forbidden")
	appendFile(t, h.path, jsonl(t, rec("p1", "pot", true, "")))
	if err := h.stop(); err == nil {
		t.Fatal("Run returned no error although the final write failed")
	}
}

// fullMerger is a ledger whose ConfigMaps are all full until room is set:
// it refuses every record with a *FullError, then stores what it is given.
type fullMerger struct {
	mu     sync.Mutex
	calls  int
	room   bool
	stored []contract.Record
}

func (m *fullMerger) Merge(_ context.Context, recs []contract.Record) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if !m.room {
		return 0, &FullError{Ledger: "led-0-2", Spills: 2, Left: append([]contract.Record(nil), recs...)}
	}
	m.stored = append(m.stored, recs...)
	return len(recs), nil
}

func (m *fullMerger) state() (int, []contract.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls, append([]contract.Record(nil), m.stored...)
}

// A full ledger never makes the sidecar drop records: they stay pending,
// are offered again on the next polls, and are stored once there is room.
// (Before spills, ErrLedgerFull dropped the whole pending batch.)
func TestSyncKeepsWhatAFullLedgerRefuses(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "records.jsonl")
	m := &fullMerger{}
	run := runSyncer(t, &Syncer{Store: m, Tail: &Tail{Path: path}, Poll: time.Second, Batch: 1}, clock)
	poll := run.poll
	a, b, c := rec("p1", "pot", true, ""), rec("p2", "pot", true, ""), rec("p3", "pot", true, "")
	appendFile(t, path, jsonl(t, a, b))
	poll()
	poll()
	if calls, _ := m.state(); calls != 2 {
		t.Errorf("a full ledger was offered the records %d times in 2 polls; want 2 (kept and retried)", calls)
	}
	m.mu.Lock()
	m.room = true
	m.mu.Unlock()
	appendFile(t, path, jsonl(t, c))
	poll()
	if err := run.stop(); err != nil {
		t.Fatalf("Run = %v; want nil once every record is stored", err)
	}
	if _, got := m.state(); !cmp.Equal([]contract.Record{a, b, c}, got) {
		t.Errorf("stored %v; want every record, in order", got)
	}
}

// When nothing has room by the end, the final write fails and counts the
// records the ledger lacks, so the pod fails and the shard is retried.
func TestSyncFinalWriteToAFullLedgerFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	appendFile(t, path, jsonl(t, rec("p1", "pot", true, ""), rec("p2", "pot", true, "")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &Syncer{Store: &fullMerger{}, Tail: &Tail{Path: path}}
	_, err := s.Run(ctx)
	if !errors.Is(err, ErrLedgerFull) || !strings.Contains(err.Error(), "2 records") {
		t.Errorf("Run = %v; want ErrLedgerFull counting the 2 records the ledger lacks", err)
	}
}

// The hand-off with `repot run --await-ledger`: the poll that sees the
// runner's done file writes every record and answers "ok"; a ledger that
// cannot take them all gets "failed: ..." with the count, at once.
func TestSyncAnswersTheRunner(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store Merger
		want  string
	}{
		{"every record stored", nil, "ok\n"},
		{"a full ledger", &fullMerger{}, "failed: ledger full: 2 records do not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			dir := t.TempDir()
			path := filepath.Join(dir, "records.jsonl")
			fake := newFake("led-0", "")
			store := tc.store
			if store == nil {
				store = &Store{Client: fake, Name: "led-0"}
			}
			s := &Syncer{Store: store, Tail: &Tail{Path: path}, Poll: time.Second, Batch: 25, MaxDelay: time.Hour,
				DoneFile: filepath.Join(dir, "run.done"), SyncedFile: filepath.Join(dir, "ledger.synced")}
			run := runSyncer(t, s, clock)
			defer func() { _ = run.stop() }()
			poll := run.poll
			a, b := rec("p1", "pot", true, ""), rec("p2", "pot", true, "")
			appendFile(t, path, jsonl(t, a, b))
			if err := os.WriteFile(s.DoneFile, []byte("done\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			poll() // neither a full batch nor MaxDelay: only the done file writes
			got, err := os.ReadFile(s.SyncedFile)
			if err != nil || !strings.HasPrefix(string(got), tc.want) {
				t.Fatalf("answer %q, %v; want %q", got, err, tc.want)
			}
			if tc.store == nil {
				if diff := cmp.Diff(jsonl(t, a, b), fake.objs["led-0"].Data[contract.LedgerRecordsKey]); diff != "" {
					t.Errorf("ledger when answering ok (-want +got):\n%s", diff)
				}
			}
		})
	}
}

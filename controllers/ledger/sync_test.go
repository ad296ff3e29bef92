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

// syncHarness runs a Syncer on a fake clock and lets the test advance it one
// poll at a time.
type syncHarness struct {
	t      *testing.T
	clock  *clocktesting.FakeClock
	fake   *fakeConfigMaps
	path   string
	polled chan struct{}
	cancel context.CancelFunc
	done   chan error
	n      int
}

func startSync(t *testing.T) *syncHarness {
	h := &syncHarness{
		t:      t,
		clock:  clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		fake:   newFake("led-0", ""),
		path:   filepath.Join(t.TempDir(), "records.jsonl"),
		polled: make(chan struct{}),
		done:   make(chan error, 1),
	}
	s := &Syncer{
		Store: &Store{Client: h.fake, Name: "led-0"}, Tail: &Tail{Path: h.path}, Clock: h.clock,
		Poll: time.Second, MaxDelay: 5 * time.Second, Batch: 3,
		polled: func() { h.polled <- struct{}{} },
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		n, err := s.Run(ctx)
		h.n = n
		h.done <- err
	}()
	return h
}

// poll advances the clock by one poll interval and waits for it to be handled.
func (h *syncHarness) poll() {
	h.t.Helper()
	for !h.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	h.clock.Step(time.Second)
	<-h.polled
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
	h.cancel()
	if err := <-h.done; err != nil {
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
	h.cancel()
	if err := <-h.done; err == nil {
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
	polled := make(chan struct{})
	m := &fullMerger{}
	s := &Syncer{Store: m, Tail: &Tail{Path: path}, Clock: clock, Poll: time.Second, Batch: 1,
		polled: func() { polled <- struct{}{} }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx)
		done <- err
	}()
	poll := func() {
		for !clock.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		clock.Step(time.Second)
		<-polled
	}
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
	cancel()
	if err := <-done; err != nil {
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
			polled := make(chan struct{})
			s := &Syncer{Store: store, Tail: &Tail{Path: path}, Clock: clock, Poll: time.Second, Batch: 25, MaxDelay: time.Hour,
				DoneFile: filepath.Join(dir, "run.done"), SyncedFile: filepath.Join(dir, "ledger.synced"),
				polled: func() { polled <- struct{}{} }}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				_, _ = s.Run(ctx)
				close(done)
			}()
			defer func() { cancel(); <-done }()
			poll := func() {
				for !clock.HasWaiters() {
					time.Sleep(time.Millisecond)
				}
				clock.Step(time.Second)
				<-polled
			}
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

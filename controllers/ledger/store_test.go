package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/runner/summary"
)

func TestStoreMergeWritesOnlyChanges(t *testing.T) {
	ctx := context.Background()
	a, b := rec("p1", "pot", true, ""), rec("p2", "pot", false, "")
	f := newFake("led-0", "")
	s := &Store{Client: f, Name: "led-0"}
	if n, err := s.Merge(ctx, []summary.Record{a, b}); err != nil || n != 2 {
		t.Fatalf("Merge = %d, %v; want 2, nil", n, err)
	}
	if n, err := s.Merge(ctx, []summary.Record{a, b}); err != nil || n != 0 {
		t.Fatalf("second Merge = %d, %v; want 0, nil", n, err)
	}
	if f.patches != 1 {
		t.Errorf("%d patches; want 1 (merging records already stored writes nothing)", f.patches)
	}
	got, _ := s.Load(ctx)
	if diff := cmp.Diff(jsonl(t, a, b), got); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
}

func TestStoreMergeRetriesOnConflict(t *testing.T) {
	ctx := context.Background()
	a, b := rec("p1", "pot", true, ""), rec("p2", "pot", false, "")
	f := newFake("led-0", "")
	conflicts := 2
	f.beforePatch = func(f *fakeConfigMaps) {
		if conflicts > 0 { // another writer stores b between our read and write
			conflicts--
			f.write("led-0", jsonl(t, b))
		}
	}
	s := &Store{Client: f, Name: "led-0"}
	if _, err := s.Merge(ctx, []summary.Record{a}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Load(ctx)
	if diff := cmp.Diff(jsonl(t, b, a), got); diff != "" {
		t.Errorf("the concurrent writer's record was lost (-want +got):\n%s", diff)
	}
}

func TestStoreMergeGivesUpAfterConflicts(t *testing.T) {
	f := newFake("led-0", "")
	f.beforePatch = func(f *fakeConfigMaps) { f.write("led-0", "") }
	s := &Store{Client: f, Name: "led-0", MaxConflicts: 3}
	_, err := s.Merge(context.Background(), []summary.Record{rec("p1", "pot", true, "")})
	if err == nil || !strings.Contains(err.Error(), "modified") {
		t.Fatalf("err = %v; want a conflict error", err)
	}
}

func TestStoreMergeRefusesOversizedLedger(t *testing.T) {
	f := newFake("led-0", "")
	s := &Store{Client: f, Name: "led-0"}
	var recs []summary.Record
	for size := 0; size <= MaxLedgerBytes; {
		r := rec(strings.Repeat("x", 200)+strconv.Itoa(len(recs)), "pot", true, "")
		recs = append(recs, r)
		size += len(jsonl(t, r))
	}
	_, err := s.Merge(context.Background(), recs)
	if err == nil || !strings.Contains(err.Error(), "shardsPerModel") {
		t.Fatalf("err = %v; want an error that says to add shards", err)
	}
}

func TestRestore(t *testing.T) {
	a, b := rec("p1", "pot", true, ""), rec("p2", "pot", false, "")
	f := newFake("led-0", jsonl(t, a, b, a))
	path := filepath.Join(t.TempDir(), "out", "records.jsonl")
	n, err := Restore(context.Background(), &Store{Client: f, Name: "led-0"}, path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonl(t, a, b), string(got)); diff != "" {
		t.Errorf("restored file (-want +got):\n%s", diff)
	}
	if n != 2 {
		t.Errorf("restored %d records; want 2", n)
	}
}

func TestRestoreMissingLedger(t *testing.T) {
	f := newFake("led-0", "")
	_, err := Restore(context.Background(), &Store{Client: f, Name: "led-9"}, filepath.Join(t.TempDir(), "r.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "led-9") {
		t.Fatalf("err = %v; want a not-found error naming the ConfigMap", err)
	}
}

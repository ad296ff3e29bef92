package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"repot.dev/repot-operator/contract"
)

func TestStoreMergeWritesOnlyChanges(t *testing.T) {
	ctx := context.Background()
	a, b := rec("p1", "pot", true, ""), rec("p2", "pot", false, "")
	f := newFake("led-0", "")
	s := &Store{Client: f, Name: "led-0"}
	if n, err := s.Merge(ctx, []contract.Record{a, b}); err != nil || n != 2 {
		t.Fatalf("Merge = %d, %v; want 2, nil", n, err)
	}
	if n, err := s.Merge(ctx, []contract.Record{a, b}); err != nil || n != 0 {
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
	if _, err := s.Merge(ctx, []contract.Record{a}); err != nil {
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
	_, err := s.Merge(context.Background(), []contract.Record{rec("p1", "pot", true, "")})
	if err == nil || !strings.Contains(err.Error(), "modified") {
		t.Fatalf("err = %v; want a conflict error", err)
	}
}

// fillRecords returns n infra-error records of about 1250 bytes each.
func fillRecords(prefix string, n int) []contract.Record {
	recs := make([]contract.Record, n)
	for i := range recs {
		recs[i] = rec(prefix+strconv.Itoa(i), "pot", false, strings.Repeat("e", 1100))
	}
	return recs
}

// withSpills adds empty spill ConfigMaps led-0-1 .. led-0-n to the fake.
func withSpills(f *fakeConfigMaps, n int) *fakeConfigMaps {
	for i := 1; i <= n; i++ {
		name := contract.LedgerSpillName("led-0", i)
		f.objs[name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"}, Data: map[string]string{}}
	}
	return f
}

func TestStoreMergeRefusesOversizedLedger(t *testing.T) {
	f := newFake("led-0", "")
	s := &Store{Client: f, Name: "led-0"}
	recs := fillRecords("p", contract.MaxLedgerBytes/1000)
	_, err := s.Merge(context.Background(), recs)
	var full *FullError
	if !errors.As(err, &full) || !strings.Contains(err.Error(), "shardsPerModel") {
		t.Fatalf("err = %v; want a *FullError that says to add shards", err)
	}
	// Nothing is dropped: what is not stored is in Left, in order.
	got, _ := s.Load(context.Background())
	var stored []contract.Record
	contract.ScanRecords(got, func(_ int, _ string, r contract.Record, err error) {
		if err == nil {
			stored = append(stored, r)
		}
	})
	if diff := cmp.Diff(recs, append(stored, full.Left...)); diff != "" {
		t.Errorf("stored then left (-all +got):\n%s", diff)
	}
}

// A full ledger spills into its spill ConfigMaps in order; merging the same
// records again stores nothing twice and writes nothing.
func TestStoreMergeSpills(t *testing.T) {
	ctx := context.Background()
	f := withSpills(newFake("led-0", ""), 2)
	s := &Store{Client: f, Name: "led-0", Spills: 2}
	recs := fillRecords("p", contract.MaxLedgerBytes/1000) // about 1.25 ledgers
	for i := 0; i < len(recs); i += 25 {                   // the sidecar's batches
		if _, err := s.Merge(ctx, recs[i:min(i+25, len(recs))]); err != nil {
			t.Fatalf("Merge batch %d: %v", i/25, err)
		}
	}
	for _, name := range s.Names() {
		if n := len(f.objs[name].Data[contract.LedgerRecordsKey]); n > contract.MaxLedgerBytes {
			t.Errorf("%s holds %d bytes, more than %d", name, n, contract.MaxLedgerBytes)
		}
	}
	if f.objs["led-0-1"].Data[contract.LedgerRecordsKey] == "" || f.objs["led-0-2"].Data[contract.LedgerRecordsKey] != "" {
		t.Errorf("want led-0 and led-0-1 used, led-0-2 empty")
	}
	got, _ := s.Load(ctx)
	if diff := cmp.Diff(jsonl(t, recs...), got); diff != "" {
		t.Errorf("ledger and spills (-want +got):\n%s", diff)
	}
	patches := f.patches
	if n, err := s.Merge(ctx, recs); err != nil || n != 0 || f.patches != patches {
		t.Errorf("merging everything again = %d, %v, %d patches; want 0, nil, 0", n, err, f.patches-patches)
	}
}

// A record that does not fit where a smaller one still does goes to the
// spill; the smaller one fills the ledger: no hole, nothing lost.
func TestStoreMergeBigRecordSpillsSmallOneFits(t *testing.T) {
	ctx := context.Background()
	f := withSpills(newFake("led-0", ""), 1)
	s := &Store{Client: f, Name: "led-0", Spills: 1}
	small := rec("small", "pot", true, "")
	// Fill led-0 to leave room for the small record (and 10 bytes) but not
	// for the big one.
	var base []contract.Record
	size := 0
	for contract.MaxLedgerBytes-size > 2500 {
		r := fillRecords("f"+strconv.Itoa(len(base))+"-", 1)[0]
		base = append(base, r)
		size += len(jsonl(t, r))
	}
	last := rec("last", "pot", false, "e")
	lineOf := func(r contract.Record) int { return len(jsonl(t, r)) }
	want := contract.MaxLedgerBytes - size - lineOf(small) - 10
	last.InfraError = strings.Repeat("e", 1+want-lineOf(last))
	base = append(base, last)
	f.objs["led-0"].Data[contract.LedgerRecordsKey] = jsonl(t, base...)
	big := rec("big", "pot", false, strings.Repeat("e", contract.MaxTextBytes))
	if _, err := s.Merge(ctx, []contract.Record{big, small}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonl(t, append(base, small)...), f.objs["led-0"].Data[contract.LedgerRecordsKey]); diff != "" {
		t.Errorf("led-0 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(jsonl(t, big), f.objs["led-0-1"].Data[contract.LedgerRecordsKey]); diff != "" {
		t.Errorf("led-0-1 (-want +got):\n%s", diff)
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

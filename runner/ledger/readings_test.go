package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"repot.dev/repot-operator/analysis/gpucost"
	"repot.dev/repot-operator/contract"
)

func readingLine(t *testing.T, shard int, phase string, uptime int64) string {
	t.Helper()
	b, err := json.Marshal(contract.Reading{Model: "m", Shard: shard, Phase: phase, Instance: "i1", UptimeMillis: uptime,
		GPUs: []contract.GPUTotals{{UUID: "GPU-0", EnergyMillijoules: uint64(uptime) * 300}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMergeLines(t *testing.T) {
	tests := []struct {
		name      string
		existing  string
		add       []string
		want      string
		wantAdded int
	}{
		{"into empty", "", []string{"a", "b"}, "a\nb\n", 2},
		{"a line already there is not added", "a\nb\n", []string{"b", "c"}, "a\nb\nc\n", 1},
		{"blank lines and repeats dropped", "a\n\n a \n", []string{"", "a"}, "a\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, added := MergeLines(tc.existing, tc.add)
			if got != tc.want || added != tc.wantAdded {
				t.Errorf("MergeLines = %q, %d; want %q, %d", got, added, tc.want, tc.wantAdded)
			}
		})
	}
}

func TestMergeReadingsKeepsRecords(t *testing.T) {
	records := jsonl(t, rec("p1", "pot", true, ""))
	fake := newFake("led-0", records)
	s := &Store{Client: fake, Name: "led-0"}
	a, b := readingLine(t, 0, contract.PhaseStart, 1000), readingLine(t, 0, contract.PhaseEnd, 9000)
	for i, lines := range [][]string{{a}, {a, b}, {b}} {
		if _, err := s.MergeReadings(context.Background(), lines); err != nil {
			t.Fatalf("merge %d: %v", i, err)
		}
	}
	cm := fake.objs["led-0"]
	if diff := cmp.Diff(map[string]string{contract.LedgerRecordsKey: records, contract.LedgerReadingsKey: a + "\n" + b + "\n"}, cm.Data); diff != "" {
		t.Errorf("ledger data (-want +got):\n%s", diff)
	}
	if fake.patches != 2 {
		t.Errorf("%d patches, want 2 (the third merge changes nothing)", fake.patches)
	}
	big := []string{strings.Repeat("x", contract.MaxLedgerBytes)}
	if _, err := s.MergeReadings(context.Background(), big); err == nil || !strings.Contains(err.Error(), "ledger full") {
		t.Errorf("oversized merge: %v", err)
	}
}

// TestReadingsSurviveARunnerRestart plays a shard whose pod is killed after
// its start reading was synced: the replacement pod starts with an empty
// readings file (an emptyDir is per pod), records its own start and end,
// and the ledger ends with all three.
func TestReadingsSurviveARunnerRestart(t *testing.T) {
	fake := newFake("led-0", "")
	store := &Store{Client: fake, Name: "led-0"}
	first := readingLine(t, 0, contract.PhaseStart, 1000)
	second, end := readingLine(t, 0, contract.PhaseStart, 50_000), readingLine(t, 0, contract.PhaseEnd, 90_000)

	syncOnce := func(lines ...string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), contract.ReadingsFile)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\nnot a reading\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // SIGTERM at once: the final read and write still happen
		var logged []string
		s := &ReadingsSyncer{Store: store, Tail: &LineTail{Path: path}, Clock: clocktesting.NewFakeClock(time.Now()),
			Logf: func(f string, a ...any) { logged = append(logged, f) }}
		if n, err := s.Run(ctx); err != nil || n != len(lines) {
			t.Fatalf("sync wrote %d, %v; want %d", n, err, len(lines))
		}
		if len(logged) != 1 {
			t.Errorf("logged %q; want the bad line reported once", logged)
		}
	}
	syncOnce(first)       // the first pod, killed mid-shard
	syncOnce(second, end) // its replacement
	got := fake.objs["led-0"].Data[contract.LedgerReadingsKey]
	if want := first + "\n" + second + "\n" + end + "\n"; got != want {
		t.Errorf("ledger readings:\n%s\nwant:\n%s", got, want)
	}
	var rs []contract.Reading
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		r, err := contract.ParseReading([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if c := gpucost.Summarize(rs); c.EnergyMillijoules != 89_000*300 {
		t.Errorf("energy %d mJ; want from the killed pod's start to the end, %d", c.EnergyMillijoules, 89_000*300)
	}
}

func TestLineTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	tail := &LineTail{Path: path}
	if got, err := tail.Next(); err != nil || got != nil {
		t.Fatalf("missing file: %v, %v", got, err)
	}
	steps := []struct {
		write string
		want  []string
	}{
		{"a\nb", []string{"a"}},
		{"\nc\n", []string{"b", "c"}},
		{"", nil},
	}
	content := ""
	for i, st := range steps {
		content += st.write
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := tail.Next()
		if err != nil || !cmp.Equal(got, st.want) {
			t.Errorf("step %d: %q, %v; want %q", i, got, err, st.want)
		}
	}
}

// Records and readings share one ConfigMap: a records merge counts the
// readings already there against contract.MaxLedgerBytes, as a readings merge counts
// the records.
func TestRecordsMergeCountsReadings(t *testing.T) {
	fake := newFake("led-0", "")
	s := &Store{Client: fake, Name: "led-0"}
	filler := []string{strings.Repeat("r", contract.MaxLedgerBytes-100)}
	if _, err := s.MergeReadings(context.Background(), filler); err != nil {
		t.Fatal(err)
	}
	var recs []contract.Record
	for i := range 10 {
		recs = append(recs, rec(fmt.Sprint("p", i), "pot", true, ""))
	}
	_, err := s.Merge(context.Background(), recs)
	if !errors.Is(err, ErrLedgerFull) || !strings.Contains(err.Error(), "shardsPerModel") {
		t.Errorf("records merge into a ledger the readings fill: %v, want ErrLedgerFull naming shardsPerModel", err)
	}
	if got := fake.objs["led-0"].Data[contract.LedgerRecordsKey]; got != "" {
		t.Errorf("records written despite the limit: %d bytes", len(got))
	}
}

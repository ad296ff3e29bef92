package contract

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanRecords(t *testing.T) {
	long := `{"model":"m","problem_id":"p","method":"pot","note":"` + strings.Repeat("x", MaxRecordLine) + `"}`
	text := "\n" + `{"model":"m","problem_id":"p1","method":"pot","success":true}` + "\n" +
		"  \n" +
		`{"model":"m","problem_id":"p2"}` + "\n" +
		`not json` + "\n" +
		long + "\n" +
		`{"model":"m","problem_id":"p3","method":"repot"}` // no final newline
	type got struct {
		Line int
		ID   string
		Err  string
	}
	var out []got
	ScanRecords(text, func(line int, _ string, r Record, err error) {
		g := got{Line: line, ID: r.ProblemID}
		if err != nil {
			g = got{Line: line, Err: err.Error()}
			if len(g.Err) > 40 {
				g.Err = g.Err[:40]
			}
		}
		out = append(out, g)
	})
	want := []got{
		{Line: 2, ID: "p1"},
		{Line: 4, Err: "record lacks model, problem_id or method"},
		{Line: 5, Err: "invalid character 'o' in literal null (e"},
		{Line: 6, Err: "longer than 1048576 bytes"},
		{Line: 7, ID: "p3"},
	}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("ScanRecords (-want +got):\n%s", d)
	}
}

// One dedupe rule: a finished run replaces an infra error of the same key;
// otherwise the first record stays.
func TestSupersedes(t *testing.T) {
	ok, infra := Record{}, Record{InfraError: "connection reset"}
	for _, tc := range []struct {
		kept, rec Record
		want      bool
	}{{ok, ok, false}, {ok, infra, false}, {infra, ok, true}, {infra, infra, false}} {
		if got := Supersedes(tc.kept, tc.rec); got != tc.want {
			t.Errorf("Supersedes(kept infra=%q, rec infra=%q) = %v, want %v", tc.kept.InfraError, tc.rec.InfraError, got, tc.want)
		}
	}
}

// An aborted attempt is keyed apart from its run and from other attempts,
// and a resume runs it again.
func TestAbortedRecord(t *testing.T) {
	run := Record{Model: "m", ProblemID: "p", Method: "pot"}
	a1 := Record{Model: "m", ProblemID: "p", Method: "pot", Aborted: true, StartedUnixMilli: 1000, Calls: 1}
	a2 := a1
	a2.StartedUnixMilli = 2000
	keys := map[string]bool{run.Key(): true, a1.Key(): true, a2.Key(): true}
	if len(keys) != 3 {
		t.Errorf("a run and two aborted attempts have %d distinct keys, want 3", len(keys))
	}
	if got, want := DoneKeys([]Record{a1, a2}), map[string]bool{}; !cmp.Equal(got, want) {
		t.Errorf("DoneKeys(aborted attempts) = %v, want none", got)
	}
	if got, want := DoneKeys([]Record{a1, run}), map[string]bool{run.Key(): true}; !cmp.Equal(got, want) {
		t.Errorf("DoneKeys(aborted, finished) = %v, want the finished run", got)
	}
}

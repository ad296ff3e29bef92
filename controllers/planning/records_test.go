package planning

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

func recordLine(t *testing.T, r contract.Record) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ledgerCM(model string, shard string, lines ...string) corev1.ConfigMap {
	return corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "ev-" + model + "-ledger-" + shard, ResourceVersion: "1",
			Labels: map[string]string{build.LabelModel: model, build.LabelShard: shard}},
		Data: map[string]string{contract.LedgerRecordsKey: strings.Join(lines, "\n")},
	}
}

func TestParseLedger(t *testing.T) {
	ok := contract.Record{Model: "m", ProblemID: "p1", Method: "pot", Success: true}
	cases := []struct {
		name         string
		text         string
		wantRecords  int
		wantProblems []ledgerProblem
	}{
		{name: "empty", text: ""},
		{name: "blank lines are skipped", text: "\n" + recordLine(t, ok) + "\n\n", wantRecords: 1},
		{name: "a broken line is reported with its number", text: recordLine(t, ok) + "\n{\"model\": \"m\", \"probl",
			wantRecords: 1, wantProblems: []ledgerProblem{{Ledger: "L", Line: 2, Err: "unexpected end of JSON input"}}},
		{name: "a record without a key is reported", text: `{"model":"m","method":"pot"}`,
			wantProblems: []ledgerProblem{{Ledger: "L", Line: 1, Err: "record lacks model, problem_id or method"}}},
		{name: "a record of another model is reported, not read", text: recordLine(t, ok) + "\n" + recordLine(t, contract.Record{Model: "other", ProblemID: "p1", Method: "pot"}),
			wantRecords: 1, wantProblems: []ledgerProblem{{Ledger: "L", Line: 2, Err: `a record of model "other" in a ledger of model "m"`}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, problems := parseLedger("L", "m", tc.text)
			if len(recs) != tc.wantRecords {
				t.Errorf("records = %d, want %d", len(recs), tc.wantRecords)
			}
			if diff := cmp.Diff(tc.wantProblems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadLedgersOrder checks that the records come in the same order
// whatever order the cache listed the ledgers in (shard 10 after shard 2).
func TestReadLedgersOrder(t *testing.T) {
	line := func(m, p string) string { return recordLine(t, contract.Record{Model: m, ProblemID: p, Method: "pot"}) }
	a := []corev1.ConfigMap{ledgerCM("m", "10", line("m", "c")), ledgerCM("m", "2", line("m", "b")), ledgerCM("a", "0", line("a", "a"))}
	b := []corev1.ConfigMap{a[2], a[0], a[1]}
	ra, _ := ReadLedgers(a)
	rb, _ := ReadLedgers(b)
	var ids []string
	for _, r := range ra {
		ids = append(ids, r.ProblemID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ra, rb); diff != "" {
		t.Errorf("order depends on listing order:\n%s", diff)
	}
}

// TestRecordCache checks that a changed ledger is parsed again and an
// unchanged one is not.
func TestRecordCache(t *testing.T) {
	c := NewRecordCache()
	ev := revtesting.MakeEvaluation("ev", "ns").Obj()
	key := NamespacedName(ev)
	line := func(p string) string { return recordLine(t, contract.Record{Model: "m", ProblemID: p, Method: "pot"}) }
	cm := ledgerCM("m", "0", line("a"))
	if r, _ := c.Read(key, []corev1.ConfigMap{cm}); len(r) != 1 {
		t.Fatalf("records = %d, want 1", len(r))
	}
	cm.Data[contract.LedgerRecordsKey] += "\n" + line("b")
	if r, _ := c.Read(key, []corev1.ConfigMap{cm}); len(r) != 1 {
		t.Errorf("same resourceVersion re-parsed: records = %d, want the cached 1", len(r))
	}
	cm.ResourceVersion = "2"
	if r, _ := c.Read(key, []corev1.ConfigMap{cm}); len(r) != 2 {
		t.Errorf("new resourceVersion: records = %d, want 2", len(r))
	}
	c.Forget(key)
	if len(c.evals) != 0 {
		t.Errorf("forget left %d entries", len(c.evals))
	}
}

// TestComputeResults checks exactly-once counting across ledgers and the
// filtering of records that do not belong to the evaluation.
func TestComputeResults(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).
		Methods(repotv1.MethodPoT, repotv1.MethodRePoT).Obj()
	r := func(model, p, method string, ok bool) contract.Record {
		return contract.Record{Model: model, ProblemID: p, Method: method, Success: ok, Environment: "tower_of_hanoi", Complexity: 3, Calls: 1, Route: contract.RouteInitialSuccess}
	}
	recs := []contract.Record{
		r("m", "p1", "pot", true), r("m", "p1", "pot", true), // written twice
		r("m", "p2", "pot", false),
		r("m", "p1", "repot", true),
		r("m", "p1", "repot-adaptive", true), // method not in the spec
		r("other", "p1", "pot", true),        // model not in the spec
	}
	res := ComputeResults(ev, recs)
	if got := res.RunsDone["m"]; got != 3 {
		t.Errorf("runs done = %d, want 3", got)
	}
	if res.RunsDone["other"] != 0 || res.Models["other"] != nil {
		t.Errorf("a stray model was counted")
	}
	got := MethodResults(ev, res.Models["m"])
	want := []struct {
		Method        repotv1.Method
		Solved, Total int32
		Rate          string
	}{{repotv1.MethodPoT, 1, 2, "50.0%"}, {repotv1.MethodRePoT, 1, 1, "100.0%"}}
	if len(got) != len(want) {
		t.Fatalf("methods = %d, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Method != w.Method || got[i].Solved != w.Solved || got[i].Total != w.Total || got[i].Rate != w.Rate {
			t.Errorf("method %d = %s %d/%d %s, want %+v", i, got[i].Method, got[i].Solved, got[i].Total, got[i].Rate, w)
		}
	}
	if res.Scaling != nil {
		t.Errorf("scaling set for a single model")
	}
	if col := rateColumn(ev, res, "pot"); col != "50.0%" {
		t.Errorf("pot column = %q", col)
	}
	if col := rateColumn(ev, ComputeResults(ev, nil), "pot"); col != "" {
		t.Errorf("pot column without results = %q, want empty", col)
	}
}

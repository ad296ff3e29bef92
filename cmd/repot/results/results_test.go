package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"repot.dev/repot-operator/analysis/report"
	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/planning"
)

func resultRecord(model, problem, method string, success bool, infra string) contract.Record {
	route := contract.RouteInitialSuccess
	if !success {
		route = contract.RouteNoExtraCall
	}
	return contract.Record{Model: model, ProblemID: problem, Environment: "tower_of_hanoi", Complexity: 3, Method: method,
		Success: success, Route: route, Calls: 1, PromptTokens: 10, CompletionTokens: 5, InitialSuccess: success, InfraError: infra}
}

// TestEvaluationRecords: the export keeps what the status counts: the
// evaluation's models and methods, each key once, a finished run over an
// infra error.
func TestEvaluationRecords(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Methods(repotv1.Method("pot")).Obj()
	in := []contract.Record{
		resultRecord("a", "p1", "pot", false, "connection reset"),
		resultRecord("a", "p1", "pot", true, ""),
		resultRecord("a", "p1", "pot", false, ""),  // a duplicate: the first finished one counts
		resultRecord("a", "p2", "repot", true, ""), // not a method of the evaluation
		resultRecord("b", "p1", "pot", true, ""),   // not a model of the evaluation
		resultRecord("a", "p3", "pot", false, ""),
	}
	got := evaluationRecords(e, in)
	want := []contract.Record{in[1], in[5]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	// The status figures from the exported summary are those of the records.
	figs, _ := planning.FiguresFromSummary(e, summary.Aggregate(got), nil)
	res := planning.ComputeResults(e, in)
	if diff := cmp.Diff(planning.MethodResults(e, res.Models["a"]), figs[0].Methods); diff != "" {
		t.Errorf("figures from the export differ from the status's (-status +export):\n%s", diff)
	}
}

// TestEvaluationRecordsDerail: for derail-550 the export leaves out what
// the status leaves out: a record of the other checkpoint statement, and one
// of the earlier protocol (no Derail schema).
func TestEvaluationRecordsDerail(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Suite(repotv1.SuiteDerail550).
		ProblemsURL("https://example.com/d.jsonl").Derail(repotv1.StatementPaper, repotv1.DerailErrorOnly).Obj()
	rec := func(problem, statement string, ok bool) contract.Record {
		r := resultRecord("a", problem, "error_only", ok, "")
		r.Derail = &contract.DerailRecord{Schema: contract.DerailSchema, CheckpointStatement: statement, InjectionType: "legal_wrong_action"}
		return r
	}
	earlier := resultRecord("a", "p4", "error_only", true, "") // no Derail schema
	in := []contract.Record{rec("p1", "paper", true), rec("p2", "full", true), rec("p3", "paper", false), earlier}
	got := evaluationRecords(e, in)
	want := []contract.Record{in[0], in[2]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	// The status counts the same runs.
	res := planning.ComputeResults(e, in)
	if res.RunsDone["a"] != len(got) {
		t.Errorf("the status counts %d runs, the export holds %d", res.RunsDone["a"], len(got))
	}
}

func TestExportEvaluation(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Obj()
	res := &EvaluationResults{Evaluation: e, Records: []contract.Record{
		resultRecord("a", "p1", "pot", true, ""), resultRecord("a", "p2", "pot", false, ""),
	}}
	dir := t.TempDir()
	if err := ExportEvaluation(dir, res); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, contract.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, partial, err := contract.ReadRecords(f)
	f.Close()
	if err != nil || partial != 0 {
		t.Fatalf("reading the export: %v (partial %d)", err, partial)
	}
	if diff := cmp.Diff(res.Records, recs); diff != "" {
		t.Errorf("records.jsonl (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(dir, contract.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.MarshalIndent(summary.Aggregate(res.Records), "", "  ")
	if string(b) != string(want)+"\n" {
		t.Errorf("summary.json is not the aggregate as repot run writes it:\n%s", b)
	}
	srcs, _, err := report.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Name != "ns/ev" || srcs[0].Origin != report.OriginExported ||
		len(srcs[0].Models) != 1 || srcs[0].Models[0].ServedBy != report.ServedSimulated {
		t.Errorf("the export read back as %+v", srcs)
	}
	if err := ExportEvaluation(dir, res); err == nil || !strings.Contains(err.Error(), "already holds records") {
		t.Errorf("a second export into the same directory: %v", err)
	}
}

// scheduleYAML is a RepotSchedule as the API server returns it.
const scheduleYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotSchedule
metadata: {name: nightly, namespace: evals}
status:
  history:
  - name: nightly-2
    scheduledTime: "2026-11-02T03:00:00Z"
    result: Complete
    models:
    - name: m
      methods:
      - {method: pot, rate: "40.0%", ratePermille: 400, interval: "[31.7%, 48.9%]"}
      - {method: repot}
    comparedWith: nightly-1
    comparisons:
    - {model: m, method: pot, problems: 120, solved: 48, baselineSolved: 66, onlySolved: 2, baselineOnlySolved: 20, diffPermille: -150, diffPoints: "-15.0", test: mcnemar-exact, pValue: "0.0001", significantDrop: true}
    regressed: true
    differences: ["model m: sampling temperature: 0 -> 0.7"]
  - name: nightly-1
    scheduledTime: "2026-11-01T03:00:00Z"
    result: Complete
    models:
    - name: m
      methods:
      - {method: pot, rate: "55.0%", ratePermille: 550, interval: "[46.1%, 63.6%]"}
`

func TestScheduleHistory(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(scheduleYAML), &u.Object); err != nil {
		t.Fatal(err)
	}
	var v scheduleView
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
		t.Fatal(err)
	}
	got := scheduleHistory(&v)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 3, 0, 0, 0, time.UTC) }
	want := &report.Schedule{Name: "evals/nightly", Points: []report.SchedulePoint{
		{Time: day(1), Evaluation: "nightly-1", Model: "m", Method: "pot", Rate: summary.Rate{Permille: 550, Percent: "55.0%", Interval: "[46.1%, 63.6%]"}},
		{Time: day(2), Evaluation: "nightly-2", Model: "m", Method: "pot", Rate: summary.Rate{Permille: 400, Percent: "40.0%", Interval: "[31.7%, 48.9%]"},
			Regression: true, Change: "-15.0", PValue: "0.0001"},
	}, Differences: []report.RunDifferences{{Evaluation: "nightly-2", ComparedWith: "nightly-1", Differences: []string{"model m: sampling temperature: 0 -> 0.7"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}

func TestEvaluationEnergy(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Simulated("b", "weak", 2).Obj()
	e.Status.Models = []repotv1.ModelStatus{
		{Name: "a", GPUSecondsHeld: 7200, Methods: []repotv1.MethodResult{{Method: "pot", Solved: 3}, {Method: "repot", Solved: 5}}},
		{Name: "b"}, // no GPU figures: left out
		{Name: "c", GPUSecondsHeld: 60, GPU: &repotv1.ModelGPUStatus{Simulated: true, EnergyJoules: 42000},
			Methods: []repotv1.MethodResult{{Method: "pot", Solved: 2}}},
	}
	got := evaluationEnergy(e)
	want := []report.ModelEnergy{{Model: "a", GPUSeconds: 7200, Solved: 8}, {Model: "c", GPUSeconds: 60, Joules: 42000, Solved: 2, Simulated: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("energy (-want +got):\n%s", diff)
	}
}

func TestFiguresFromStatusLeaveOutEnergyEstimates(t *testing.T) {
	j := int64(1200)
	st := &repotv1.RepotEvaluationStatus{Models: []repotv1.ModelStatus{{
		Name:    "a",
		Methods: []repotv1.MethodResult{{Method: "pot", Solved: 3, EstimatedEnergyJoules: &j, EstimatedJoulesPerSolvedProblem: &j}},
	}}}
	got := planning.FiguresFromStatus(st)
	want := []planning.ModelFigures{{Name: "a", Methods: []repotv1.MethodResult{{Method: "pot", Solved: 3}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	if st.Models[0].Methods[0].EstimatedEnergyJoules == nil {
		t.Error("FiguresFromStatus changed the status it read")
	}
}

// TestExportCarriesProvenance: `repot results export` writes the status's
// provenance into source.json, and `repot report` of the export shows it in
// its provenance table.
func TestExportCarriesProvenance(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Obj()
	e.Status.ProblemsHash, e.Status.SandboxMode = "sha256:abc", "seccomp, landlock"
	e.Status.Models = []repotv1.ModelStatus{{Name: "a", Provenance: &repotv1.ModelProvenance{
		Images: []repotv1.ContainerImage{
			{Pod: "server", Container: "server", Image: "repot:dev", ImageID: "repot@sha256:111"},
			{Pod: "runner", Container: "run", Image: "repot:dev"},
		},
		ServerArgs:         []string{"repot", "sim-server", "--profile", "strong"},
		Revision:           "v2",
		OperatorVersion:    "v0.5.0",
		ServedModels:       []repotv1.ServedModel{{ID: "sim-strong", Root: "repot-simulation/strong", MaxModelLen: ptr.To[int64](131072)}},
		Sampling:           []repotv1.NameValue{{Name: "temperature", Value: "0"}},
		ChatTemplateKwargs: []repotv1.NameValue{{Name: "enable_thinking", Value: "false"}},
		RepotVersion:       "(devel)",
		RepotCommit:        "abc123",
	}}}
	res := &EvaluationResults{Evaluation: e, Records: []contract.Record{resultRecord("a", "p1", "pot", true, "")}}
	dir := t.TempDir()
	if err := ExportEvaluation(dir, res); err != nil {
		t.Fatal(err)
	}
	srcs, _, err := report.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := report.AllModels
	want := []report.ProvenanceEntry{
		{Model: all, Item: "problem set", Value: "sha256:abc"},
		{Model: all, Item: "sandbox mode", Value: "seccomp, landlock"},
		{Model: "a", Item: "image: server/server", Value: "repot@sha256:111"},
		{Model: "a", Item: "image: runner/run", Value: "repot:dev (no digest reported)"},
		{Model: "a", Item: "server args", Value: "repot sim-server --profile strong"},
		{Model: "a", Item: "revision", Value: "v2"},
		{Model: "a", Item: "operator version", Value: "v0.5.0"},
		{Model: "a", Item: "served model (/v1/models)", Value: "sim-strong, root repot-simulation/strong, max_model_len 131072"},
		{Model: "a", Item: "sampling: temperature", Value: "0"},
		{Model: "a", Item: "chat_template_kwargs: enable_thinking", Value: "false"},
		{Model: "a", Item: "runner repot version", Value: "(devel)"},
		{Model: "a", Item: "runner repot commit", Value: "abc123"},
	}
	if len(srcs) != 1 {
		t.Fatalf("%d sources read back", len(srcs))
	}
	if diff := cmp.Diff(want, srcs[0].Provenance); diff != "" {
		t.Errorf("provenance read back from the export (-want +got):\n%s", diff)
	}
	var page bytes.Buffer
	if err := report.Render(&page, report.Report{Sources: srcs}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`<table class="provenance">`, "repot@sha256:111", "sim-strong, root repot-simulation/strong, max_model_len 131072"} {
		if !strings.Contains(page.String(), s) {
			t.Errorf("the report lacks %q", s)
		}
	}
}

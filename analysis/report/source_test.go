package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// An exported directory's source.json carries the GPU use the records do
// not, so a report of the export shows the same sections as the live one.
func TestSourceFileCarriesEnergy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, contract.RecordsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := []ModelEnergy{{Model: "a", GPUSeconds: 60, Joules: 42000, Solved: 2, Simulated: true}}
	b, err := json.Marshal(SourceMeta{Name: "ns/ev", Origin: OriginExported, Energy: want})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SourceFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := loadRunDir(dir, "fallback", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s.Energy); diff != "" {
		t.Errorf("energy (-want +got):\n%s", diff)
	}
}

// The provenance table appears exactly when the source has provenance, one
// row per entry, its values escaped.
func TestProvenanceTable(t *testing.T) {
	const table = `<table class="provenance">`
	s := FromRecords("ns/ev", OriginExported, nil)
	if page := render(t, Report{Sources: []Source{s}}); strings.Contains(page, table) {
		t.Errorf("a source without provenance has a provenance table")
	}
	s.Provenance = []ProvenanceEntry{
		{Model: AllModels, Item: "problem set", Value: "sha256:abc"},
		{Model: "m", Item: "server args", Value: "vllm serve <m> --revision v1"},
	}
	page := render(t, Report{Sources: []Source{s}})
	if !strings.Contains(page, table) {
		t.Fatalf("no provenance table:\n%s", page)
	}
	// Folded, with a summary that says what is inside.
	const folded = `<details class="provenance"><summary>Provenance: 2 fields, what produced these numbers`
	if !strings.Contains(page, folded) || strings.Index(page, folded) > strings.Index(page, table) {
		t.Errorf("the provenance table is not folded under the summary %s", folded)
	}
	for _, want := range []string{
		`<tr><th scope="row">(all models)</th><td>problem set</td><td class="value">sha256:abc</td></tr>`,
		`<tr><th scope="row">m</th><td>server args</td><td class="value">vllm serve &lt;m&gt; --revision v1</td></tr>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks the row %s", want)
		}
	}
}

// A schedule's runs that differed in more than time are listed under its
// history.
func TestScheduleDifferencesTable(t *testing.T) {
	sched := &Schedule{Name: "ns/nightly", Points: []SchedulePoint{
		{Time: time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC), Evaluation: "n-1", Model: "m", Method: "pot", Rate: summary.Rate{Permille: 500, Percent: "50.0%"}},
		{Time: time.Date(2026, 11, 2, 3, 0, 0, 0, time.UTC), Evaluation: "n-2", Model: "m", Method: "pot", Rate: summary.Rate{Permille: 400, Percent: "40.0%"}},
	}}
	if page := render(t, Report{Schedule: sched}); strings.Contains(page, `id="schedule-differences"`) {
		t.Error("a schedule without differences lists some")
	}
	sched.Differences = []RunDifferences{{Evaluation: "n-2", ComparedWith: "n-1",
		Differences: []string{"model m: sampling temperature: 0 -> 0.7", "model m: runner container run image: a -> b"}}}
	page := render(t, Report{Schedule: sched})
	want := `<tr><th scope="row">n-2</th><td>n-1</td><td class="value">model m: sampling temperature: 0 -&gt; 0.7<br>model m: runner container run image: a -&gt; b</td></tr>`
	if !strings.Contains(page, want) {
		t.Errorf("the page lacks the differences row %s", want)
	}
}

// A repot run directory's provenance.json reaches the report's provenance
// table, for the directory's one model.
func TestRunDirProvenance(t *testing.T) {
	dir := t.TempDir()
	r := contract.Record{Model: "m", ProblemID: "p1", Environment: "tower_of_hanoi", Method: contract.MethodPoT, Success: true, Calls: 1}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, contract.RecordsFile), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := contract.WriteProvenance(dir, contract.Provenance{RepotVersion: "(devel)", ServedModels: []contract.ServedModel{{ID: "sim-strong", Root: "repot-simulation/strong"}},
		Request: map[string]json.RawMessage{"temperature": json.RawMessage("0"), "chat_template_kwargs": json.RawMessage(`{"enable_thinking":false}`)}}); err != nil {
		t.Fatal(err)
	}
	s, err := loadRunDir(dir, "out", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []ProvenanceEntry{
		{Model: "m", Item: "served model (/v1/models)", Value: "sim-strong, root repot-simulation/strong"},
		{Model: "m", Item: "request: chat_template_kwargs", Value: `{"enable_thinking":false}`},
		{Model: "m", Item: "request: temperature", Value: "0"},
		{Model: "m", Item: "runner repot version", Value: "(devel)"},
	}
	if diff := cmp.Diff(want, s.Provenance); diff != "" {
		t.Errorf("provenance of a run directory (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, contract.ProvenanceFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = loadRunDir(dir, "out", nil)
	if err != nil {
		t.Fatalf("a cut-off provenance.json stopped the report: %v", err)
	}
	if len(s.Provenance) != 0 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "provenance is left out") {
		t.Errorf("a cut-off provenance.json: provenance %v, notes %q; want none and a note", s.Provenance, s.Notes)
	}
}

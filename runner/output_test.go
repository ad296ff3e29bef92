package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/runnertest"
)

func TestOpenOutputRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, contract.RecordsFile), []byte(`{"model":"m","problem_id":"p","method":"pot"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenOutput(dir, "", false); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("err = %v, want a hint to --resume", err)
	}
}

func TestOpenOutputResumeCutsPartialLine(t *testing.T) {
	dir := t.TempDir()
	good := `{"model":"m","problem_id":"p","method":"pot","success":true}` + "\n"
	infra := `{"model":"m","problem_id":"q","method":"pot","infra_error":"x"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, contract.RecordsFile), []byte(good+infra+`{"model":"m","prob`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, contract.TracesFile), []byte("old trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := OpenOutput(dir, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Existing) != 2 || o.DroppedPartial != 18 {
		t.Errorf("existing %d partial %d, want 2 and 18", len(o.Existing), o.DroppedPartial)
	}
	if diff := cmp.Diff(map[string]bool{contract.Record{Model: "m", ProblemID: "p", Method: "pot"}.Key(): true}, contract.DoneKeys(o.Existing)); diff != "" {
		t.Errorf("DoneKeys (-want +got):\n%s", diff)
	}
	if err := writeJSONLine(o.Records, contract.Record{Model: "m", ProblemID: "r", Method: "pot"}); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONLine(o.Traces, "new"); err != nil {
		t.Fatal(err)
	}
	if err := o.WriteSummary(summary.Aggregate(o.Existing)); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	all, err := o.AllRecords()
	if err != nil || len(all) != 3 {
		t.Errorf("records after append: %d, %v; want 3", len(all), err)
	}
	tr, _ := os.ReadFile(filepath.Join(dir, contract.TracesFile))
	if string(tr) != "old trace\n\"new\"\n" {
		t.Errorf("traces = %q, want the old line kept and the new appended", tr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, contract.SummaryFile)); err != nil || !bytes.HasSuffix(b, []byte("}\n")) {
		t.Errorf("summary.json: %v %q", err, b)
	}
}

// TestOpenOutputResumeEndsUnterminatedLine: a complete last record without
// its newline (as another tool may write it) is kept, and the next record
// is appended on a line of its own rather than glued to it.
func TestOpenOutputResumeEndsUnterminatedLine(t *testing.T) {
	dir := t.TempDir()
	good := `{"model":"m","problem_id":"p","method":"pot","success":true}`
	if err := os.WriteFile(filepath.Join(dir, contract.RecordsFile), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := OpenOutput(dir, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Existing) != 1 || o.DroppedPartial != 0 {
		t.Errorf("existing %d partial %d, want 1 and 0", len(o.Existing), o.DroppedPartial)
	}
	if err := writeJSONLine(o.Records, contract.Record{Model: "m", ProblemID: "q", Method: "pot"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	all, err := o.AllRecords()
	if err != nil || len(all) != 2 {
		t.Errorf("records after append: %d, %v; want 2", len(all), err)
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := summary.WriteTable(&b, summary.Aggregate(fixtureRecords())); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"model m: 2 problems",
		"pot             50.0% (1/2)",
		"repot-adaptive  100.0% (2/2)",
		"fresh_retry_empty_plan 1/1",
		"repot-adaptive vs pot  2",
		"+50.0",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestWriteTableRepairRounds(t *testing.T) {
	recs := fixtureRecords()
	if strings.Contains(tableOf(t, recs), "REPAIR ROUNDS") {
		t.Errorf("a table without rounds shows a rounds table")
	}
	recs = append(recs,
		contract.Record{Model: "m", ProblemID: "a", Environment: "e", Method: contract.MethodVRR, Success: true, Calls: 2, LoopStop: contract.LoopAccepted,
			Rounds: []contract.Round{{Prefix: 1, Tokens: 10}, {Valid: true, Prefix: 3, Accepts: 1, Tokens: 7}}},
		contract.Record{Model: "m", ProblemID: "b", Environment: "e", Method: contract.MethodVRR, Calls: 1, LoopStop: contract.LoopGain,
			Rounds: []contract.Round{{Prefix: 2, Tokens: 12}}})
	table := tableOf(t, recs)
	for _, want := range []string{
		"REPAIR ROUNDS  ROUND  ENTERED  LEFT SOLVED  ALPHA (HITS/TRIALS)",
		"repot-vrr      0      2        0            -",
		"repot-vrr      1      1        1            1/1                  0/0",
		"loop stops: accepted 1, gain_below_tau 1",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func tableOf(t *testing.T, recs []contract.Record) string {
	t.Helper()
	var b bytes.Buffer
	if err := summary.WriteTable(&b, summary.Aggregate(recs)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func fixtureRecords() []contract.Record {
	r := func(p, m string, ok bool, route string) contract.Record {
		return contract.Record{Model: "m", ProblemID: p, Environment: "e", Complexity: 1, Method: m, Success: ok, Route: route, Calls: 1, PromptTokens: 10, CompletionTokens: 5}
	}
	return []contract.Record{
		r("a", contract.MethodPoT, true, contract.RouteInitialSuccess),
		r("b", contract.MethodPoT, false, contract.RouteNoExtraCall),
		r("a", contract.MethodAdaptive, true, contract.RouteInitialSuccess),
		r("b", contract.MethodAdaptive, true, contract.RouteFreshEmptyPlan),
	}
}

func TestProgressPrinter(t *testing.T) {
	var plain bytes.Buffer
	pp := &ProgressPrinter{W: &plain, Clock: runnertest.NewFakeClock(), Interval: 3 * time.Second}
	for i := 1; i <= 4; i++ {
		pp.Update(Progress{Done: i, Total: 4, Solved: i / 2})
	}
	// The fake clock advances 1s per reading: lines at runs 1 and 4 (final).
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "progress: 1/4 runs") || !strings.Contains(lines[1], "4/4 runs 100.0%  solved 2") || !strings.Contains(lines[1], "ETA 0s") {
		t.Errorf("plain progress:\n%s", plain.String())
	}
	if strings.Contains(plain.String(), "in flight") {
		t.Errorf("progress without a limit shows one:\n%s", plain.String())
	}
	var limited bytes.Buffer
	pp = &ProgressPrinter{W: &limited, Clock: runnertest.NewFakeClock()}
	pp.Update(Progress{Done: 1, Total: 4, InFlightLimit: 27})
	if !strings.Contains(limited.String(), "in flight <= 27") {
		t.Errorf("progress does not show the limit: %q", limited.String())
	}
	var tty bytes.Buffer
	pp = &ProgressPrinter{W: &tty, TTY: true, Clock: runnertest.NewFakeClock(), Interval: time.Nanosecond}
	pp.Update(Progress{Done: 1, Total: 2})
	pp.Update(Progress{Done: 2, Total: 2})
	if s := tty.String(); !strings.Contains(s, "\r\x1b[K[###############...............] 1/2") || !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		t.Errorf("tty progress: %q", s)
	}
}

// TestProgressPrinterZeroValueClock: a printer without a clock uses the
// system clock instead of panicking.
func TestProgressPrinterZeroValueClock(t *testing.T) {
	var b bytes.Buffer
	pp := &ProgressPrinter{W: &b}
	pp.Update(Progress{Done: 1, Total: 1, Solved: 1})
	if !strings.Contains(b.String(), "progress: 1/1 runs") {
		t.Errorf("progress line %q", b.String())
	}
}

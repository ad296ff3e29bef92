package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/analysis/report/reporttest"
	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/analysis/vrr"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/methods"
)

// rec is a record of model m on problem p with method meth.
func rec(m, env string, complexity int, p, meth string, success bool, route string, prefix int) contract.Record {
	return contract.Record{Model: m, ProblemID: p, Environment: env, Complexity: complexity, Method: meth, Success: success,
		StoppedReason: "goal", Route: route, Calls: 1, PromptTokens: 100, CompletionTokens: 50,
		InitialSuccess: route == contract.RouteInitialSuccess, InitialPrefixPermille: prefix}
}

// twoModels are records of two models on two environments, so that every
// record-driven section has data.
func twoModels() []contract.Record {
	var recs []contract.Record
	for _, m := range []string{"a", "b"} {
		for i, env := range []string{"tower_of_hanoi", "blocksworld", "tower_of_hanoi", "blocksworld"} {
			p := env + string(rune('0'+i))
			ok := i%2 == 0 || m == "a"
			recs = append(recs,
				rec(m, env, 3+i, p, contract.MethodPoT, i == 0, map[bool]string{true: contract.RouteInitialSuccess, false: contract.RouteNoExtraCall}[i == 0], 200*i),
				rec(m, env, 3+i, p, contract.MethodPoTRetry, i == 0, map[bool]string{true: contract.RouteInitialSuccess, false: contract.RouteFreshRetry}[i == 0], 200*i),
				rec(m, env, 3+i, p, contract.MethodRePoT, ok, map[bool]string{true: contract.RouteInitialSuccess, false: contract.RouteSuffixRepair}[i == 0], 200*i))
		}
	}
	return recs
}

func render(t *testing.T, r Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var sectionID = regexp.MustCompile(`<section class="chart" id="([^"]+)"`)

func sectionIDs(page string) []string {
	var ids []string
	for _, m := range sectionID.FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestSectionsAreOptional: each section appears exactly when its data does.
func TestSectionsAreOptional(t *testing.T) {
	one := FromRecords("one", OriginRunDir, twoModels()[:12]) // model a only
	two := FromRecords("two", OriginRunDir, twoModels())
	withExtras := two
	withExtras.Energy = []ModelEnergy{{Model: "a", GPUSeconds: 3600, Joules: 2_000_000, Solved: 4}}
	withExtras.Derail = []DerailResult{{Model: "a", Condition: "no_feedback", Rate: summary.Rate{Solved: 1, Total: 4, Permille: 250, LowPermille: 46, HighPermille: 699, Percent: "25.0%", Interval: "[4.6%, 69.9%]"}}}
	sched := &Schedule{Name: "ns/nightly", Points: []SchedulePoint{
		{Time: time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC), Evaluation: "n-1", Model: "a", Method: "pot", Rate: summary.Rate{Permille: 500, Percent: "50.0%"}},
		{Time: time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC), Evaluation: "n-2", Model: "a", Method: "pot", Rate: summary.Rate{Permille: 250, Percent: "25.0%"}, Regression: true, Change: "-25.0", PValue: "0.0313"},
	}}
	looped := twoModels()[:12]
	for i := range looped {
		if looped[i].Method == contract.MethodRePoT {
			looped[i].Votes = 3
			looped[i].Rounds = []contract.Round{{Prefix: 1, Accepts: 2, Tokens: 150}, {Valid: looped[i].Success, Prefix: 4, Accepts: 3, Tokens: 90}}
		}
	}
	withRounds := FromRecords("rounds", OriginRunDir, looped)
	tests := []struct {
		name string
		r    Report
		want []string
	}{
		{"empty", Report{}, nil},
		{"repair rounds", Report{Sources: []Source{withRounds}}, []string{"s1-success", "s1-routes", "s1-cost", "s1-rounds", "s1-heat-0"}},
		{"one model: no scaling", Report{Sources: []Source{one}}, []string{"s1-success", "s1-routes", "s1-cost", "s1-heat-0"}},
		{"two models: scaling", Report{Sources: []Source{two}}, []string{"s1-success", "s1-routes", "s1-cost", "s1-scaling", "s1-heat-0", "s1-heat-1"}},
		{"energy and derail", Report{Sources: []Source{withExtras}}, []string{"s1-success", "s1-routes", "s1-cost", "s1-scaling", "s1-heat-0", "s1-heat-1", "s1-energy", "s1-derail"}},
		{"schedule only", Report{Schedule: sched}, []string{"schedule-history"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := render(t, tc.r)
			if diff := cmp.Diff(tc.want, sectionIDs(page)); diff != "" {
				t.Errorf("sections (-want +got):\n%s", diff)
			}
			if n, m := strings.Count(page, "<svg "), len(tc.want); n != m {
				t.Errorf("%d svg elements, want %d", n, m)
			}
		})
	}
}

// TestChartsLeadEachSource: a source's charts come first, success, routing
// and cost in that order, and its models and provenance tables follow
// them, folded under summaries that say what they hold.
func TestChartsLeadEachSource(t *testing.T) {
	s := FromRecords("two", OriginRunDir, twoModels())
	s.Models = []ModelInfo{{Name: "a", ServedBy: ServedSimulated}, {Name: "b", ServedBy: ServedVLLM}}
	s.Provenance = []ProvenanceEntry{{Model: AllModels, Item: "problem set", Value: "sha256:abc"}}
	page := render(t, Report{Sources: []Source{s}})
	var pos []int
	for _, mark := range []string{
		`id="s1-top"`,
		`<section class="chart" id="s1-success"`,
		`<section class="chart" id="s1-routes"`,
		`<section class="chart" id="s1-cost"`,
		`<details class="models"><summary>Models: 2 models, how each was served</summary>`,
		`<details class="provenance"><summary>Provenance: 1 field, what produced these numbers`,
	} {
		i := strings.Index(page, mark)
		if i < 0 {
			t.Fatalf("the page lacks %s", mark)
		}
		if len(pos) > 0 && i < pos[len(pos)-1] {
			t.Errorf("%s comes before the part above it in the list", mark)
		}
		pos = append(pos, i)
	}
	// No table of the source stands between its heading and its first chart.
	if strings.Contains(page[pos[0]:pos[1]], "<table") {
		t.Errorf("a table precedes the first chart:\n%s", page[pos[0]:pos[1]])
	}
}

// TestPageIsSelfContained: no URL, no script, no external resource.
func TestPageIsSelfContained(t *testing.T) {
	two := FromRecords("two", OriginRunDir, twoModels())
	page := render(t, Report{Sources: []Source{two}})
	for _, bad := range []string{"http:", "https:", "<script", "<link", "<img", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
}

func TestSimulationStatement(t *testing.T) {
	tests := []struct {
		name   string
		models []ModelInfo
		energy []ModelEnergy
		want   []string // substrings, one per sentence
	}{
		{"none", nil, nil, []string{"No results."}},
		{"simulated", []ModelInfo{{Name: "m", ServedBy: ServedSimulated}}, nil, []string{"Simulated models: m (s)."}},
		{"real", []ModelInfo{{Name: "m", ServedBy: ServedVLLM}}, nil, []string{"Real models"}},
		{"unknown", []ModelInfo{{Name: "m", ServedBy: ServedUnknown}}, nil, []string{"Not recorded whether real or simulated: m (s)"}},
		{"simulated GPU", []ModelInfo{{Name: "m", ServedBy: ServedVLLM}}, []ModelEnergy{{Model: "m", Simulated: true}}, []string{"Real models", "simulated GPU"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := simulationStatement(Report{Sources: []Source{{Name: "s", Models: tc.models, Energy: tc.energy}}})
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d sentences", got, len(tc.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("sentence %d = %q, want it to contain %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestDerailFromRecords: records whose methods are Derail conditions give
// the Derail section; ordinary methods (with the two shared ablations) do
// not.
func TestDerailFromRecords(t *testing.T) {
	tests := []struct {
		name    string
		methods []string
		want    []string
	}{
		{"ordinary", []string{"pot", "repot", "repot-restart"}, nil},
		{"derail", []string{"repot-restart", "no_feedback", "state_feedback"}, []string{"no_feedback", "state_feedback", "repot-restart"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var recs []contract.Record
			for _, m := range tc.methods {
				recs = append(recs, rec("m", "blocksworld", 3, "p", m, true, contract.RouteInitialSuccess, 0))
			}
			var got []string
			for _, d := range FromRecords("s", OriginRunDir, recs).Derail {
				got = append(got, d.Condition)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadDirErrors(t *testing.T) {
	empty := t.TempDir()
	if _, _, err := LoadDir(empty, nil); err == nil || !strings.Contains(err.Error(), "records.jsonl") {
		t.Errorf("empty dir: %v", err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "records.jsonl"), []byte(`{"model":"m","problem_id":"p","method":"pot"}`+"\n{not json}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadDir(bad, nil); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: %v", err)
	}
	badMeta := t.TempDir()
	if err := os.WriteFile(filepath.Join(badMeta, "records.jsonl"), []byte(`{"model":"m","problem_id":"p","method":"pot"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(badMeta, SourceFile), []byte(`{"name":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadDir(badMeta, nil); err == nil || !strings.Contains(err.Error(), SourceFile) {
		t.Errorf("bad source.json: %v", err)
	}
}

// artifacts is where the browser tests leave pages and screenshots:
// $REPORT_ARTIFACTS when set (CI keeps them), else a temporary dir.
func artifacts(t *testing.T) string {
	if d := os.Getenv("REPORT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestBrowserMultiRunAndSchedule runs the real engine against two simulated
// models into a multi-run directory, reports it (each run and the runs
// combined) and a schedule built from three runs, and opens both pages in
// chromium: every chart is laid out with a size and has its table, with no
// console error and no network request.
func TestBrowserMultiRunAndSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the engine and chromium; skipped with -short")
	}
	reporttest.Browser(t) // skip early (outside CI) when there is no browser
	out := artifacts(t)
	multi := t.TempDir()
	simRun(t, filepath.Join(multi, "strong"), "strong", 1, 24)
	simRun(t, filepath.Join(multi, "weak"), "weak", 2, 24)

	srcs, sched, err := LoadDir(multi, map[string]bool{"sim-strong": true, "sim-weak": true})
	if err != nil {
		t.Fatal(err)
	}
	if sched != nil || len(srcs) != 2 {
		t.Fatalf("LoadDir: %d sources, schedule %v; want 2 and none", len(srcs), sched)
	}
	srcs = append([]Source{Combine("combined", srcs)}, srcs...)
	// The combined source carries what an evaluation's does: a long
	// provenance and a note; its charts still lead the page.
	srcs[0].Provenance = longProvenance([]string{"sim-strong", "sim-weak"})
	srcs[0].Notes = append(srcs[0].Notes, "Stalled: NoProgress: no runner reported for 10m.")
	page := filepath.Join(out, "multi-run.html")
	writePage(t, page, Report{Title: "multi-run test", Generated: time.Now(), Sources: srcs})
	// combined: success, routes, cost, scaling, 2 heat maps; each run: 4.
	res := reporttest.Check(t, page, filepath.Join(out, "multi-run.png"), 6+4+4)
	t.Log(res)

	// A schedule's history: the weak model's run, then the strong one's,
	// then the weak one's again, flagged where its rate fell.
	var points []SchedulePoint
	day := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	for i, s := range []Source{srcs[2], srcs[1], srcs[2]} {
		for _, ms := range s.Summary.Models[0].Methods {
			points = append(points, SchedulePoint{Time: day.Add(time.Duration(i) * 24 * time.Hour), Evaluation: "nightly-" + string(rune('1'+i)),
				Model: "sim", Method: ms.Method, Rate: ms.Rate, Regression: i == 2})
		}
	}
	spage := filepath.Join(out, "schedule.html")
	writePage(t, spage, Report{Title: "schedule test", Generated: time.Now(), Schedule: &Schedule{Name: "default/nightly", Points: points}, Sources: srcs[1:2]})
	sres := reporttest.Check(t, spage, filepath.Join(out, "schedule.png"), 1+4)
	t.Log(sres)
	reporttest.SectionShot(t, spage, "#schedule-history", filepath.Join(out, "schedule-history.png"))
	reporttest.SectionShot(t, page, "#s1-scaling", filepath.Join(out, "multi-run-scaling.png"))
}

// TestBrowserRepairRounds runs the noisy-verifier ablation (rho0 = rho1 =
// 150 per mille) with the real engine against the simulated server: fixed
// R=5 repot, repot-vrr and VRR-Guard, one run directory each, and opens the
// report in chromium: every chart, the per-round figure among them, is laid
// out with its table and no console error.
func TestBrowserRepairRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the engine and chromium; skipped with -short")
	}
	reporttest.Browser(t)
	out := artifacts(t)
	dir := t.TempDir()
	noisy := func(votes, guardJ int) func(*methods.Options) {
		return func(o *methods.Options) {
			o.RepairBudget = 5
			o.VRR = vrr.Config{Votes: votes, Noise: vrr.Noise{FalseAcceptPermille: 150, FalseRejectPermille: 150}, CalibrationProblems: 8, GuardJPermille: guardJ}
		}
	}
	simRunWith(t, filepath.Join(dir, "1-fixed-R5"), "strong", 1, 24, []string{contract.MethodRePoT}, noisy(1, 0))
	simRunWith(t, filepath.Join(dir, "2-vrr"), "strong", 1, 24, []string{contract.MethodVRR}, noisy(3, 0))
	simRunWith(t, filepath.Join(dir, "3-guard"), "strong", 1, 24, []string{contract.MethodVRR}, noisy(3, 1001))
	srcs, _, err := LoadDir(dir, map[string]bool{"sim-strong": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 3 {
		t.Fatalf("%d sources, want 3", len(srcs))
	}
	for _, s := range srcs {
		if len(s.Summary.Models) != 1 || len(s.Summary.Models[0].Methods) != 1 || len(s.Summary.Models[0].Methods[0].Rounds) == 0 {
			t.Fatalf("%s: no repair rounds in the summary", s.Name)
		}
	}
	page := filepath.Join(out, "repair-rounds.html")
	writePage(t, page, Report{Title: "repair rounds test", Generated: time.Now(), Sources: srcs})
	// each run: success, routes, cost, rounds, one heat map.
	res := reporttest.Check(t, page, filepath.Join(out, "repair-rounds.png"), 3*5)
	t.Log(res)
	reporttest.SectionShot(t, page, "#s1-rounds", filepath.Join(out, "repair-rounds-fixed.png"))
	reporttest.SectionShot(t, page, "#s2-rounds", filepath.Join(out, "repair-rounds-vrr.png"))
}

// longProvenance is a provenance of the size an evaluation of models has:
// 31 fields.
func longProvenance(models []string) []ProvenanceEntry {
	out := []ProvenanceEntry{{Model: AllModels, Item: "problem set", Value: "sha256:0f3c"}}
	for _, m := range models {
		for i := range 15 {
			out = append(out, ProvenanceEntry{Model: m, Item: "server argument " + strconv.Itoa(i+1), Value: "--max-model-len=32768"})
		}
	}
	return out
}

func writePage(t *testing.T, path string, r Report) {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTimeTicks(t *testing.T) {
	day := func(d, h int) float64 { return float64(time.Date(2026, 11, d, h, 0, 0, 0, time.UTC).Unix()) }
	tests := []struct {
		name   string
		lo, hi float64
		want   []string
	}{
		{"days", day(1, 3), day(3, 3), []string{"Nov 2", "Nov 3"}},
		{"hours", day(1, 3), day(1, 9), []string{"Nov 1 03:00", "Nov 1 04:00", "Nov 1 05:00", "Nov 1 06:00", "Nov 1 07:00", "Nov 1 08:00", "Nov 1 09:00"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tk := range (timeTicks{}).Ticks(tc.lo, tc.hi) {
				got = append(got, tk.Label)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ticks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCostChartShowsThePapersSevenMethods: a run of the paper's comparison
// shows each of its seven methods in the success and cost sections (table
// rows and chart legend), each method with its own marker shape.
func TestCostChartShowsThePapersSevenMethods(t *testing.T) {
	var recs []contract.Record
	for i, meth := range contract.PaperMethods {
		for p := range 3 {
			r := rec("a", "blocksworld", 3, "bw"+strconv.Itoa(p), meth, p <= i%3, contract.RouteNoExtraCall, 0)
			r.Calls, r.CompletionTokens = 1+i, 50*(1+i)
			recs = append(recs, r)
		}
	}
	page := render(t, Report{Sources: []Source{FromRecords("paper", OriginRunDir, recs)}})
	cost := page[strings.Index(page, `id="s1-cost"`):]
	cost = cost[:strings.Index(cost, "</section>")]
	for _, meth := range contract.PaperMethods {
		// The table row and the legend entry name it.
		if n := strings.Count(cost, "a / "+meth+"<"); n < 2 {
			t.Errorf("the cost section names %q %d times, want its table row and its legend entry", "a / "+meth, n)
		}
	}
	methods := methodNames(FromRecords("paper", OriginRunDir, recs).Summary)
	shapes := map[int]bool{}
	for _, m := range contract.PaperMethods {
		shapes[indexOf(methods, m)%len(glyphShapes)] = true
	}
	if len(shapes) != len(contract.PaperMethods) {
		t.Errorf("the seven methods share marker shapes: %d distinct", len(shapes))
	}
}

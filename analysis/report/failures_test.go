package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/analysis/report/reporttest"
	"repot.dev/repot-operator/contract"
)

// hostileIDs are problem ids a trace may carry: paths, separators, dots,
// markup and a very long one.
var hostileIDs = []string{"../../x", "a/b", "a_b", `a\b`, "..", ".", ".hidden", "<script>alert(1)</script>", strings.Repeat("long-", 100), "日本語"}

func TestPathComponent(t *testing.T) {
	seen := map[string]string{}
	for _, id := range append([]string{"p1", "apple_blocks_n03_seed0015_template00", ""}, hostileIDs...) {
		c := PathComponent(id)
		if c == "" || c == "." || c == ".." || strings.HasPrefix(c, ".") || strings.ContainsAny(c, `/\<>`+"\x00") || len(c) > maxComponent+13 {
			t.Errorf("PathComponent(%q) = %q: not one safe component", id, c)
		}
		if filepath.Base(c) != c || !filepath.IsLocal(c) {
			t.Errorf("PathComponent(%q) = %q is not a local file name", id, c)
		}
		if other, ok := seen[c]; ok {
			t.Errorf("PathComponent(%q) = PathComponent(%q) = %q", id, other, c)
		}
		seen[c] = id
	}
	// Safe names stay as they are, so paths are readable.
	for _, id := range []string{"p1", "sim-strong", "repot", "apple_blocks_n03_seed0015_template00"} {
		if c := PathComponent(id); c != id {
			t.Errorf("PathComponent(%q) = %q, want it unchanged", id, c)
		}
	}
}

func TestGroupFailures(t *testing.T) {
	recs := []contract.Record{
		{Model: "b", ProblemID: "p2", Method: "pot", StoppedReason: "invalid_move"},
		{Model: "a", ProblemID: "p2", Method: "repot", StoppedReason: "max_steps"},
		{Model: "a", ProblemID: "p1", Method: "repot", StoppedReason: "no_plan"},
		{Model: "a", ProblemID: "p1", Method: "pot", StoppedReason: "program_error"},
		{Model: "a", ProblemID: "p3", Method: "pot", Success: true, StoppedReason: "goal"},
		{Model: "a", ProblemID: "p4", Method: "pot", StoppedReason: "infra_error", InfraError: "connection reset"},
		{Model: "a", ProblemID: "p1", Method: "pot", StoppedReason: "program_error"}, // the same run again
		{Model: "a", ProblemID: "p5", Method: "pot", StoppedReason: "format_error", Aborted: true},
	}
	runs := FailedRuns(FromRecords("s", OriginRunDir, recs))
	runs[0].Href = "./x.html"
	got := groupFailures(runs)
	want := []failureGroup{
		{Model: "a", Method: "pot", Summary: "a, pot: 1 failed run, 1 linked", Runs: []FailedRun{
			{Model: "a", Method: "pot", ProblemID: "p1", StoppedReason: "program_error", Href: "./x.html"}}},
		{Model: "a", Method: "repot", Summary: "a, repot: 2 failed runs, 0 linked", Runs: []FailedRun{
			{Model: "a", Method: "repot", ProblemID: "p1", StoppedReason: "no_plan"},
			{Model: "a", Method: "repot", ProblemID: "p2", StoppedReason: "max_steps"}}},
		{Model: "b", Method: "pot", Summary: "b, pot: 1 failed run, 0 linked", Runs: []FailedRun{
			{Model: "b", Method: "pot", ProblemID: "p2", StoppedReason: "invalid_move"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

// traceLine is a failed trace of model m, method repot, on problem p, whose
// completion is completion.
func traceLine(t *testing.T, m, p, completion string, success bool) string {
	t.Helper()
	tr := contract.Trace{ProblemID: p, Model: m, Method: "repot", Environment: "blocksworld", Complexity: 3,
		Success: success, StoppedReason: "invalid_move", TokensIn: 337, TokensOut: 74,
		Calls: []contract.CallTrace{{Index: 0, Purpose: "initial",
			Prompt:     []contract.Message{{Role: "system", Content: "You are <b>an expert</b>."}, {Role: "user", Content: "Solve it."}},
			Completion: completion, Code: "print([[1, 0, 2]])", Stdout: "[[1, 0, 2]]\n", Stderr: "warning: </pre><script>x()</script>",
			Plan:   []json.RawMessage{json.RawMessage(`[1, 0, 2]`)},
			Replay: &contract.ReplayTrace{PrefixLen: 0, PlanLen: 1, StopReason: "invalid_move", Error: "block 1 is not on top", State: json.RawMessage(`{"stacks":[[1],[],[]]}`)}}}}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

const hostileCompletion = `moves = []</pre><script>alert("pwned")</script><a href="javascript:x()">x</a>`

// hostileSource is a run directory's source whose failed runs carry
// hostile ids, with traces for all but one of them.
func hostileSource(t *testing.T) Source {
	t.Helper()
	dir := t.TempDir()
	var recs, traces strings.Builder
	for i, id := range hostileIDs {
		r := contract.Record{Model: "m/../../etc", ProblemID: id, Method: "repot", Environment: "blocksworld", Complexity: 3, StoppedReason: "invalid_move"}
		b, _ := json.Marshal(r)
		recs.Write(b)
		recs.WriteByte('\n')
		if i == 0 {
			continue // a failed run without a trace
		}
		traces.WriteString(traceLine(t, r.Model, id, hostileCompletion, false))
	}
	// A solved run, and a line that is not JSON.
	ok := contract.Record{Model: "m/../../etc", ProblemID: "solved", Method: "repot", Success: true, StoppedReason: "goal"}
	b, _ := json.Marshal(ok)
	recs.Write(b)
	recs.WriteByte('\n')
	traces.WriteString(traceLine(t, ok.Model, ok.ProblemID, "fine", true))
	traces.WriteString("{not json\n")
	for name, content := range map[string]string{contract.RecordsFile: recs.String(), contract.TracesFile: traces.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srcs, _, err := LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srcs[0]
}

// TestWriteTracePages: every failed run with a trace gets a page inside
// the trace directory, whatever its ids; the report's links lead to them;
// model text shows as text.
func TestWriteTracePages(t *testing.T) {
	src := hostileSource(t)
	out := t.TempDir()
	reportPath := filepath.Join(out, "demo-report.html")
	r := Report{Sources: []Source{src}}
	var warn bytes.Buffer
	linked, err := WriteTracePages(context.Background(), reportPath, &r, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if linked != len(hostileIDs)-1 {
		t.Errorf("linked %d runs, want %d", linked, len(hostileIDs)-1)
	}
	if warn.Len() > 0 {
		t.Errorf("warnings: %s", warn.String())
	}
	f := r.Sources[0].Failures
	if f == nil || len(f.Runs) != len(hostileIDs) {
		t.Fatalf("failures %+v, want %d runs", f, len(hostileIDs))
	}
	if want := []string{"Traces from " + src.Traces.From + ".", "1 failed run has no trace there.", "Trace lines that are not JSON, skipped: 1."}; !cmp.Equal(want, f.Notes) {
		t.Errorf("notes (-want +got):\n%s", cmp.Diff(want, f.Notes))
	}
	traceDir := filepath.Join(out, "demo-report-traces")
	for _, run := range f.Runs {
		if run.ProblemID == hostileIDs[0] {
			if run.Href != "" {
				t.Errorf("run %q has no trace but a link %q", run.ProblemID, run.Href)
			}
			continue
		}
		rel, err := url.PathUnescape(run.Href)
		if err != nil {
			t.Fatalf("href %q: %v", run.Href, err)
		}
		page := filepath.Join(out, filepath.FromSlash(rel))
		if r, err := filepath.Rel(traceDir, page); err != nil || !filepath.IsLocal(r) {
			t.Errorf("the page of %q, %s, is not inside %s", run.ProblemID, page, traceDir)
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("the link of %q: %v", run.ProblemID, err)
			continue
		}
		html := string(b)
		if strings.Contains(html, "<script") || strings.Contains(html, `<a href="javascript:`) {
			t.Errorf("the page of %q holds markup of the model's text:\n%s", run.ProblemID, html)
		}
		for _, want := range []string{`&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;`, "block 1 is not on top", "You are &lt;b&gt;an expert&lt;/b&gt;.", "invalid_move", "337 in, 74 out",
			`href="./../../../../demo-report.html"`} {
			if !strings.Contains(html, want) {
				t.Errorf("the page of %q lacks %s", run.ProblemID, want)
			}
		}
	}
	// Nothing but pages and the marker lies in the trace directory, and
	// nothing beside it but the directory.
	err = filepath.WalkDir(traceDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(p, ".html") && d.Name() != traceDirMarker {
			t.Errorf("unexpected file %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "demo-report-traces" {
		t.Errorf("beside the report: %v, want the trace directory only", entries)
	}

	// The report lists the runs, folded, each linked.
	html := render(t, r)
	for _, want := range []string{`<details class="failures" id="s1-failures"><summary>Failed problems and their traces: 10 failed runs, 9 linked to their trace</summary>`,
		`<details class="failure-group"><summary>m/../../etc, repot: 10 failed runs, 9 linked</summary>`,
		`&lt;script&gt;alert(1)&lt;/script&gt;</a>`, `<th scope="row">../../x <span class="meta">(no trace)</span></th>`} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %s", want)
		}
	}

	// A second report replaces the pages; a directory repot report did not
	// write is refused.
	if _, err := WriteTracePages(context.Background(), reportPath, &r, &warn); err != nil {
		t.Errorf("writing the pages again: %v", err)
	}
	foreign := filepath.Join(out, "other.html")
	if err := os.MkdirAll(TraceDir(foreign), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteTracePages(context.Background(), foreign, &r, &warn); err == nil || !strings.Contains(err.Error(), "holds no trace pages") {
		t.Errorf("a foreign directory: %v", err)
	}
}

// TestTraceStoreFails: traces that fail to read leave every run unlinked,
// keep no page, say what failed, warn, and the report still renders.
func TestTraceStoreFails(t *testing.T) {
	src := hostileSource(t)
	good := src.Traces.Each
	src.Traces.From = "the artifact store s3://b/ns/ev/uid/"
	src.Traces.Each = func(ctx context.Context, fn func([]byte) error) error {
		if err := good(ctx, fn); err != nil {
			return err
		}
		return errors.New("ns/ev/uid/m/shard-0000/traces/000001.jsonl holds 10 bytes, the manifest says 12")
	}
	noStore := FromRecords("ns/plain", OriginEvaluation, []contract.Record{{Model: "m", ProblemID: "p", Method: "pot", StoppedReason: "no_plan"}})
	noStore.Traces = Traces{Missing: "The evaluation ns/plain has no artifact store; set spec.artifacts.s3."}
	out := t.TempDir()
	reportPath := filepath.Join(out, "r.html")
	r := Report{Sources: []Source{src, noStore}}
	var warn bytes.Buffer
	linked, err := WriteTracePages(context.Background(), reportPath, &r, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if linked != 0 {
		t.Errorf("linked %d runs of a store that failed", linked)
	}
	if _, err := os.Stat(TraceDir(reportPath)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the trace directory: %v, want none", err)
	}
	if !strings.Contains(warn.String(), "warning: ") || !strings.Contains(warn.String(), "the manifest says 12") {
		t.Errorf("warning %q", warn.String())
	}
	f := r.Sources[0].Failures
	if f.Linked() != 0 || !strings.Contains(f.Problem, "Reading the traces from the artifact store s3://b/ns/ev/uid/ failed") {
		t.Errorf("failures %+v", f)
	}
	html := render(t, r)
	for _, want := range []string{"the manifest says 12", "has no artifact store; set spec.artifacts.s3.", `id="s2-failures"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestTracePageCap: a huge trace makes a page of about the budget that
// says it was cut.
func TestTracePageCap(t *testing.T) {
	tr := contract.Trace{ProblemID: "p", Model: "m", Method: "repot"}
	for i := range 40 {
		tr.Calls = append(tr.Calls, contract.CallTrace{Index: i, Purpose: "repair", Completion: strings.Repeat("é", 100_000), Stdout: strings.Repeat("x", 10)})
	}
	var b bytes.Buffer
	if err := WriteTracePage(&b, tr, TracePageInfo{Source: "s", From: "f", ReportHref: "./r.html"}); err != nil {
		t.Fatal(err)
	}
	if b.Len() > pageBudget+200_000 {
		t.Errorf("the page is %d bytes, more than the budget of %d and the markup", b.Len(), pageBudget)
	}
	html := b.String()
	for _, want := range []string{"This page is cut", "call(s) are left out", "more bytes are not shown"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if !strings.Contains(html, `id="call-0"`) || strings.Contains(html, `id="call-39"`) {
		t.Errorf("want the first calls and not the last")
	}
}

// TestBrowserTraceLinks opens a report with failed runs in chromium: the
// first chart is still in the first screen, a failed problem's link lies in
// the folded section, and following it shows the trace page with the
// model's hostile completion as text.
func TestBrowserTraceLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs chromium; skipped with -short")
	}
	reporttest.Browser(t)
	out := artifacts(t)
	page := filepath.Join(out, "trace-links.html")
	r := Report{Title: "trace links test", Generated: time.Now(), Sources: []Source{hostileSource(t)}}
	if _, err := WriteTracePages(context.Background(), page, &r, os.Stderr); err != nil {
		t.Fatal(err)
	}
	writePage(t, page, r)
	res := reporttest.Check(t, page, filepath.Join(out, "trace-links.png"), 1)
	t.Log(res)

	got := reporttest.FollowLink(t, page, "#s1-failures table.failed a", "#outcome")
	if !got.WasFolded {
		t.Errorf("the link was not in a folded section")
	}
	if !strings.Contains(got.URL, "/trace-links-traces/") {
		t.Errorf("the link led to %s", got.URL)
	}
	for _, want := range []string{hostileCompletion, "stop reason", "invalid_move", "block 1 is not on top"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("the trace page does not show %q; it shows:\n%s", want, got.Text)
		}
	}
	for _, e := range got.ConsoleErrors {
		t.Errorf("console error: %s", e)
	}
	for _, r := range got.Requests {
		t.Errorf("network request: %s", r)
	}
}

// TestTracesNotComplete: traces the store has not all of still link what
// is there, and the section and a warning say what is missing.
func TestTracesNotComplete(t *testing.T) {
	src := hostileSource(t)
	src.Traces.Warning = "the traces of ns/ev are not complete in the store (status.artifacts.state Uploading); linking what is there"
	r := Report{Sources: []Source{src}}
	var warn bytes.Buffer
	linked, err := WriteTracePages(context.Background(), filepath.Join(t.TempDir(), "r.html"), &r, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if linked != len(hostileIDs)-1 {
		t.Errorf("linked %d runs, want %d", linked, len(hostileIDs)-1)
	}
	if want := "warning: " + src.Name + ": " + src.Traces.Warning + "\n"; warn.String() != want {
		t.Errorf("warning %q, want %q", warn.String(), want)
	}
	if notes := r.Sources[0].Failures.Notes; len(notes) < 2 || notes[1] != src.Traces.Warning+"." {
		t.Errorf("notes %q lack the warning", notes)
	}
}

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"repot.dev/repot-operator/contract"
)

// TraceDir is the directory of a report's trace pages: beside the report,
// named after it (demo-report.html: demo-report-traces).
func TraceDir(reportPath string) string {
	base := filepath.Base(reportPath)
	return filepath.Join(filepath.Dir(reportPath), strings.TrimSuffix(base, filepath.Ext(base))+"-traces")
}

// traceDirMarker is the file that says a directory holds trace pages
// repot report wrote, so that a later report may replace it.
const traceDirMarker = ".repot-report-traces"

// localError is a failure of the local file system while the traces are
// streamed: unlike a failure to read the traces, it fails the report.
type localError struct{ err error }

func (e localError) Error() string { return e.err.Error() }
func (e localError) Unwrap() error { return e.err }

// WriteTracePages sets each source's Failures (its failed runs, FailedRuns)
// and writes one page per failed run whose trace it finds into
// TraceDir(reportPath), replacing the pages of an earlier report there. It
// streams each source's traces once, keeping nothing but the failed runs'
// pages. Failing to read a source's traces does not fail the report: the
// source's section says what failed, its runs stay unlinked (a store's
// objects are checked only once read to their end, so no page of a store
// that failed is kept), and warn gets a line, as it does for traces that
// are not complete (Traces.Warning). It returns the number of runs
// linked; its error is the local file system's.
func WriteTracePages(ctx context.Context, reportPath string, r *Report, warn io.Writer) (int, error) {
	dir := TraceDir(reportPath)
	if err := checkTraceDir(dir); err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+"-*")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	reportName := filepath.Base(reportPath)
	used := map[string]bool{}
	total := 0
	for i := range r.Sources {
		s := &r.Sources[i]
		if s.combined {
			continue
		}
		f := &Failures{Runs: FailedRuns(*s)}
		s.Failures = f
		if len(f.Runs) == 0 {
			continue
		}
		t := s.Traces
		switch {
		case t.Problem != "":
			f.Problem = "The failed runs are not linked to their traces: " + t.Problem
			fmt.Fprintf(warn, "warning: %s: %s\n", s.Name, f.Problem)
			continue
		case t.Each == nil:
			missing := t.Missing
			if missing == "" {
				missing = "The traces of this source are not known, so its failed runs are not linked."
			}
			f.Notes = append(f.Notes, missing)
			continue
		}
		comp := PathComponent(s.Name)
		for n := 2; used[comp]; n++ {
			comp = PathComponent(s.Name) + "-" + strconv.Itoa(n)
		}
		used[comp] = true
		w := &pageWriter{root: tmp, source: comp, sourceName: s.Name, from: t.From, reportName: reportName,
			hrefBase: "./" + url.PathEscape(filepath.Base(dir)) + "/", runs: f.Runs, want: map[runKey]int{}}
		for j, run := range f.Runs {
			w.want[runKey{run.Model, run.Method, run.ProblemID}] = j
		}
		err := t.Each(ctx, w.line)
		if le := (localError{}); errors.As(err, &le) {
			return 0, le.err
		}
		if err != nil {
			for j := range f.Runs {
				f.Runs[j].Href = ""
			}
			if rmErr := os.RemoveAll(filepath.Join(tmp, comp)); rmErr != nil {
				return 0, rmErr
			}
			f.Problem = fmt.Sprintf("Reading the traces from %s failed, so no failed run is linked: %v", t.From, err)
			fmt.Fprintf(warn, "warning: %s: %s\n", s.Name, f.Problem)
			continue
		}
		linked := f.Linked()
		total += linked
		f.Notes = append(f.Notes, fmt.Sprintf("Traces from %s.", t.From))
		if t.Warning != "" {
			f.Notes = append(f.Notes, t.Warning+".")
			fmt.Fprintf(warn, "warning: %s: %s\n", s.Name, t.Warning)
		}
		if n := len(f.Runs) - linked; n > 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("%s no trace there.", counted(n, "failed run")+map[bool]string{true: " has", false: " have"}[n == 1]))
		}
		if w.bad > 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("Trace lines that are not JSON, skipped: %d.", w.bad))
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return 0, err
	}
	if total == 0 {
		return 0, nil
	}
	if err := os.WriteFile(filepath.Join(tmp, traceDirMarker), []byte("trace pages of "+reportName+", written by repot report\n"), 0o644); err != nil {
		return 0, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return 0, err
	}
	return total, os.Rename(tmp, dir)
}

// checkTraceDir refuses to replace a directory that repot report did not
// write.
func checkTraceDir(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, traceDirMarker)); err != nil {
		return fmt.Errorf("%s exists and holds no trace pages of repot report (no %s): move it, or write the report elsewhere", dir, traceDirMarker)
	}
	return nil
}

// pageWriter writes the pages of one source's failed runs as its traces
// stream past.
type pageWriter struct {
	root, source, sourceName, from, reportName, hrefBase string
	runs                                                 []FailedRun
	want                                                 map[runKey]int
	bad                                                  int
}

// traceHead is the part of a trace line that says whose it is.
type traceHead struct {
	ProblemID string `json:"problem_id"`
	Model     string `json:"model"`
	Method    string `json:"method"`
	Success   bool   `json:"success"`
	Metadata  struct {
		InfraError string `json:"infra_error"`
	} `json:"metadata"`
}

func (w *pageWriter) line(line []byte) error {
	var h traceHead
	if err := json.Unmarshal(line, &h); err != nil {
		w.bad++
		return nil
	}
	if h.Success || h.Metadata.InfraError != "" {
		return nil
	}
	i, ok := w.want[runKey{h.Model, h.Method, h.ProblemID}]
	if !ok || w.runs[i].Href != "" {
		return nil
	}
	var tr contract.Trace
	if err := json.Unmarshal(line, &tr); err != nil {
		w.bad++
		return nil
	}
	parts := []string{w.source, PathComponent(tr.Model), PathComponent(tr.Method), PathComponent(tr.ProblemID) + ".html"}
	path := filepath.Join(append([]string{w.root}, parts...)...)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return localError{err}
	}
	var b bytes.Buffer
	if err := WriteTracePage(&b, tr, TracePageInfo{Source: w.sourceName, From: w.from,
		ReportHref: "./" + strings.Repeat("../", len(parts)) + url.PathEscape(w.reportName)}); err != nil {
		return localError{err}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return localError{err}
	}
	for j := range parts {
		parts[j] = url.PathEscape(parts[j])
	}
	w.runs[i].Href = w.hrefBase + strings.Join(parts, "/")
	return nil
}

// TracePageInfo is what a trace page says besides the trace.
type TracePageInfo struct {
	// Source names the report's source, From where the trace was read.
	Source, From string
	// ReportHref links back to the report.
	ReportHref string
}

// The caps of a trace page: one field shows at most fieldCap bytes, a page
// at most pageBudget bytes of the run's text; later calls are left out.
const (
	fieldCap   = 64 << 10
	pageBudget = 1 << 20
)

// clipped is a text shown in part when it is long.
type clipped struct {
	Text string
	// Cut is the number of bytes left out.
	Cut int
}

// budget hands out a page's bytes of text.
type budget struct{ left int }

func (b *budget) take(s string) clipped {
	n := min(len(s), fieldCap, b.left)
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	b.left -= n
	return clipped{Text: s[:n], Cut: len(s) - n}
}

type tracePage struct {
	TracePageInfo
	Title string
	T     contract.Trace
	Wall  string
	Calls []callView
	// Omitted is the number of calls left out once the page was full.
	Omitted                       int
	FieldCap, PageBudget          string
	Truncated                     bool
	Problem, Derail               clipped
	HasProblemMeta, HasDerailMeta bool
}

type messageView struct {
	Role    string
	Content clipped
}

type callView struct {
	C          *contract.CallTrace
	Prompt     []messageView
	Completion clipped
	Code       clipped
	Stdout     clipped
	Stderr     clipped
	Plan       clipped
	State      clipped
	Verdict    string
}

// WriteTracePage writes one run's trace as a self-contained HTML page: its
// outcome, stop reason and tokens, and each call's purpose, prompt,
// completion, program, output, plan and replay verdict. Every text is
// escaped (model text is hostile); each field shows at most 64 KiB and the
// page at most 1 MiB of text, saying so where it cut.
func WriteTracePage(w io.Writer, t contract.Trace, info TracePageInfo) error {
	pg := tracePage{TracePageInfo: info, T: t, Title: t.ProblemID + " — " + t.Model + ", " + t.Method,
		Wall: strconv.FormatFloat(t.WallTime, 'f', 1, 64) + " s", FieldCap: "64 KiB", PageBudget: "1 MiB"}
	b := &budget{left: pageBudget}
	if len(t.Metadata.Problem) > 0 {
		pg.HasProblemMeta, pg.Problem = true, b.take(indentJSON(t.Metadata.Problem))
	}
	if t.Metadata.Derail != nil {
		d, _ := json.MarshalIndent(t.Metadata.Derail, "", "  ")
		pg.HasDerailMeta, pg.Derail = true, b.take(string(d))
	}
	for i := range t.Calls {
		if b.left <= 0 {
			pg.Omitted = len(t.Calls) - i
			break
		}
		c := &t.Calls[i]
		v := callView{C: c}
		for _, m := range c.Prompt {
			v.Prompt = append(v.Prompt, messageView{Role: m.Role, Content: b.take(m.Content)})
		}
		v.Completion, v.Code, v.Stdout, v.Stderr = b.take(c.Completion), b.take(c.Code), b.take(c.Stdout), b.take(c.Stderr)
		var plan strings.Builder
		for _, mv := range c.Plan {
			var cb bytes.Buffer
			if json.Compact(&cb, mv) != nil {
				cb.Reset()
				cb.Write(mv)
			}
			plan.Write(cb.Bytes())
			plan.WriteByte('\n')
		}
		v.Plan = b.take(plan.String())
		if r := c.Replay; r != nil {
			v.Verdict = replayVerdict(r)
			if len(r.State) > 0 {
				v.State = b.take(indentJSON(r.State))
			}
		}
		pg.Calls = append(pg.Calls, v)
	}
	pg.Truncated = pg.Omitted > 0 || b.left <= 0 || anyCut(pg)
	var out bytes.Buffer
	if err := tracePageTemplate.Execute(&out, pg); err != nil {
		return err
	}
	_, err := w.Write(out.Bytes())
	return err
}

func anyCut(pg tracePage) bool {
	if pg.Problem.Cut > 0 || pg.Derail.Cut > 0 {
		return true
	}
	for _, c := range pg.Calls {
		for _, m := range c.Prompt {
			if m.Content.Cut > 0 {
				return true
			}
		}
		for _, f := range []clipped{c.Completion, c.Code, c.Stdout, c.Stderr, c.Plan, c.State} {
			if f.Cut > 0 {
				return true
			}
		}
	}
	return false
}

// indentJSON is raw JSON indented for reading, or as it is when it is not
// JSON.
func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// replayVerdict says in words what replaying a call's plan found.
func replayVerdict(r *contract.ReplayTrace) string {
	v := "did not reach the goal"
	if r.ReachedGoal {
		v = "reached the goal"
	}
	v += fmt.Sprintf(": %d of %d moves verified", r.PrefixLen, r.PlanLen)
	if r.From > 0 {
		v += fmt.Sprintf(" after the checkpoint at move %d", r.From)
	}
	if r.StopReason != "" {
		v += ", stopped: " + r.StopReason
	}
	if r.Kind != "" {
		v += ", " + r.Kind
	}
	if r.Error != "" {
		v += ": " + r.Error
	}
	return v
}

var tracePageTemplate = template.Must(template.New("trace").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 0.5em 2em 1em; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.4em; margin: 0.3em 0; word-break: break-all; }
.meta { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; font-weight: 600; }
td { word-break: break-all; }
section.call { border-top: 1px solid #ddd; margin: 1em 0; }
pre { background: #f7f7f7; border: 1px solid #e3e3e3; padding: 0.4em 0.6em; white-space: pre-wrap; word-break: break-word; max-height: 40em; overflow: auto; font-size: 0.85em; }
.cut { color: #a00; font-size: 0.85em; }
.truncated { border-left: 6px solid #d55e00; background: #fff4ec; padding: 0.3em 1em; }
</style>
</head>
<body>
<p class="meta"><a href="{{.ReportHref}}">Back to the report</a> · {{.Source}} · read from {{.From}}</p>
<h1>Trace of {{.T.ProblemID}}</h1>
{{if .Truncated}}<p class="truncated">This page is cut: a field shows at most {{.FieldCap}} and the page at most {{.PageBudget}} of the run's text{{if .Omitted}}; the last {{.Omitted}} call(s) are left out{{end}}. The whole trace is in {{.From}}.</p>{{end}}
<table id="outcome"><tbody>
<tr><th scope="row">outcome</th><td>{{if .T.Success}}solved{{else}}failed{{end}}</td></tr>
<tr><th scope="row">stop reason</th><td>{{.T.StoppedReason}}</td></tr>
<tr><th scope="row">model, method</th><td>{{.T.Model}}, {{.T.Method}}</td></tr>
<tr><th scope="row">environment, complexity</th><td>{{.T.Environment}}, {{.T.Complexity}}</td></tr>
<tr><th scope="row">tokens</th><td>{{.T.TokensIn}} in, {{.T.TokensOut}} out ({{.T.Metadata.CachedTokens}} cached, {{.T.Metadata.ReasoningTokens}} reasoning)</td></tr>
<tr><th scope="row">calls, route</th><td>{{len .T.Calls}}{{with .T.Metadata.Route}}, {{.}}{{end}}{{if .T.Metadata.RepairUsed}} (repair used){{end}}</td></tr>
<tr><th scope="row">first plan</th><td>{{.T.Metadata.InitialPlanLen}} moves, verified prefix {{.T.Metadata.InitialPrefixPermille}}‰; final verified prefix {{.T.Metadata.FinalPrefixLen}} moves</td></tr>
<tr><th scope="row">wall time</th><td>{{.Wall}}</td></tr>
{{if .T.Metadata.InfraRetries}}<tr><th scope="row">infrastructure retries</th><td>{{.T.Metadata.InfraRetries}}</td></tr>{{end}}
{{if .T.Metadata.SandboxMode}}<tr><th scope="row">sandbox</th><td>{{.T.Metadata.SandboxMode}}</td></tr>{{end}}
</tbody></table>
{{if .HasProblemMeta}}<details><summary>Problem metadata</summary>{{template "clip" .Problem}}</details>{{end}}
{{if .HasDerailMeta}}<details><summary>Derail checkpoint</summary>{{template "clip" .Derail}}</details>{{end}}
{{range .Calls}}<section class="call" id="call-{{.C.Index}}">
<h2>Call {{.C.Index}}: {{.C.Purpose}}</h2>
<p class="meta">finish reason {{.C.FinishReason}}; {{.C.Usage.Prompt}} prompt and {{.C.Usage.Completion}} completion tokens; {{.C.LatencyMS}} ms{{if .C.Retries}}; {{.C.Retries}} retries{{end}}; outcome {{.C.Outcome}}</p>
{{if .C.InfraError}}<p>Infrastructure error: {{.C.InfraError}}</p>{{end}}
<details><summary>Prompt: {{len .Prompt}} message(s)</summary>
{{range .Prompt}}<h3>{{.Role}}</h3>{{template "clip" .Content}}{{end}}
</details>
<h3>Completion</h3>{{template "clip" .Completion}}
{{if .C.ParseError}}<p>Parse error: {{.C.ParseError}}</p>{{end}}
{{if .Code.Text}}<h3>Program</h3>{{template "clip" .Code}}{{end}}
{{if or .Stdout.Text .Stderr.Text .C.ExitCode .C.SandboxFailure}}<p class="meta">exit code {{.C.ExitCode}}; {{.C.SandboxMS}} ms in the sandbox{{if .C.SandboxFailure}}; sandbox failure: {{.C.SandboxFailure}}{{end}}</p>{{end}}
{{if .Stdout.Text}}<h3>Standard output</h3>{{template "clip" .Stdout}}{{end}}
{{if .Stderr.Text}}<h3>Standard error</h3>{{template "clip" .Stderr}}{{end}}
{{if .Plan.Text}}<h3>Plan: {{len .C.Plan}} moves</h3>{{template "clip" .Plan}}{{end}}
{{if .Verdict}}<h3>Replay</h3><p class="verdict">{{.Verdict}}</p>{{if .State.Text}}<details><summary>State where the replay stopped</summary>{{template "clip" .State}}</details>{{end}}{{end}}
</section>
{{end}}
</body>
</html>
{{define "clip"}}<pre>{{.Text}}</pre>{{if .Cut}}<p class="cut">{{.Cut}} more bytes are not shown.</p>{{end}}{{end}}`))

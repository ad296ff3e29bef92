package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// page is what the template renders.
type page struct {
	Title      string
	Generated  string
	Simulation []string
	Sources    []pageSource
	Schedule   []section
	// ScheduleDifferences are the schedule's runs that differed from
	// their baselines in more than time.
	ScheduleDifferences []RunDifferences
}

type pageSource struct {
	ID, Name, Origin string
	Records          int
	Models           []ModelInfo
	Notes            []string
	Provenance       []ProvenanceEntry
	Sections         []section
	// ModelsSummary and ProvenanceSummary label the folded models and
	// provenance tables, saying what is inside without opening them.
	ModelsSummary, ProvenanceSummary string
	// Failures are the source's failed runs, nil without a section.
	Failures                    *Failures
	FailuresID, FailuresSummary string
	FailureGroups               []failureGroup
}

// counted is "n noun" with noun in the plural unless n is 1.
func counted(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return strconv.Itoa(n) + " " + noun
}

// Render writes r as one HTML page.
func Render(w io.Writer, r Report) error {
	pg := page{Title: r.Title, Generated: r.Generated.UTC().Format(time.RFC3339)}
	if pg.Title == "" {
		pg.Title = "RePoT evaluation report"
	}
	for i, s := range r.Sources {
		prefix := "s" + strconv.Itoa(i+1) + "-"
		secs, err := sourceSections(prefix, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		ps := pageSource{ID: prefix + "top", Name: s.Name, Origin: string(s.Origin),
			Records: s.Summary.Records, Models: s.Models, Notes: s.Notes, Provenance: s.Provenance, Sections: secs,
			ModelsSummary:     "Models: " + counted(len(s.Models), "model") + ", how each was served",
			ProvenanceSummary: "Provenance: " + counted(len(s.Provenance), "field") + ", what produced these numbers (images, server arguments, sampling, builds)"}
		if f := s.Failures; f != nil && len(f.Runs) > 0 {
			ps.Failures, ps.FailuresID, ps.FailuresSummary, ps.FailureGroups = f, prefix+"failures", failuresSummary(f), groupFailures(f.Runs)
		}
		pg.Sources = append(pg.Sources, ps)
	}
	sched, err := scheduleSections(r.Schedule)
	if err != nil {
		return err
	}
	pg.Schedule = sched
	if r.Schedule != nil {
		pg.ScheduleDifferences = r.Schedule.Differences
	}
	pg.Simulation = simulationStatement(r)
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, pg); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// simulationStatement says, in sentences, what on the page was simulated
// and what is not known.
func simulationStatement(r Report) []string {
	var sim, unknown, real []string
	energySim := false
	for _, s := range r.Sources {
		for _, m := range s.Models {
			label := m.Name + " (" + s.Name + ")"
			switch m.ServedBy {
			case ServedSimulated:
				sim = append(sim, label)
			case ServedUnknown, "":
				unknown = append(unknown, label)
			default:
				real = append(real, label)
			}
		}
		for _, e := range s.Energy {
			energySim = energySim || e.Simulated
		}
	}
	sort.Strings(sim)
	sort.Strings(unknown)
	sort.Strings(real)
	var out []string
	if len(sim) > 0 {
		out = append(out, "Simulated models: "+strings.Join(sim, ", ")+". Their answers come from repot sim-server, a stand-in that produces programs and plans with a configured capability where no GPU exists; their numbers test the pipeline and say nothing about any real model.")
	}
	if len(real) > 0 {
		out = append(out, "Real models (vLLM servers or OpenAI-compatible endpoints): "+strings.Join(real, ", ")+".")
	}
	if len(unknown) > 0 {
		out = append(out, "Not recorded whether real or simulated: "+strings.Join(unknown, ", ")+". A repot run directory does not say which server answered; pass --simulated MODEL to mark simulated ones.")
	}
	if energySim {
		out = append(out, "GPU-seconds and joules marked simulated come from a simulated GPU, not from NVML readings.")
	}
	if len(out) == 0 {
		out = append(out, "No results.")
	}
	return out
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 0.5em 2em 1em; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.6em; margin: 0.2em 0 0; }
h2 { margin: 0.8em 0 0.1em; }
h3 { margin: 0.3em 0; }
.meta { color: #555; margin: 0.1em 0 0.3em; font-size: 0.9em; }
.simulation { border-left: 6px solid #d55e00; background: #fff4ec; padding: 0.3em 1em; margin: 0.5em 0; font-size: 0.9em; }
.simulation p { margin: 0.2em 0; }
nav.contents { margin: 0.4em 0; font-size: 0.9em; }
nav.contents a { margin-right: 1em; }
.note { margin: 0.3em 0; }
section.chart { margin: 1em 0 2em; border-top: 1px solid #ddd; padding-top: 0.3em; }
section.chart > p { margin: 0.2em 0; }
figure { margin: 0.3em 0; }
svg.chart { display: block; width: 100%; max-width: 900px; height: auto; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th[scope=row] { text-align: left; font-weight: normal; }
thead th { background: #f3f3f3; }
details { margin: 0.5em 0; }
summary { cursor: pointer; font-weight: 600; }
table.provenance td { text-align: left; }
table.provenance td.value { font-family: ui-monospace, monospace; word-break: break-all; }
details details { margin-left: 1.2em; }
details.failures p.problem { border-left: 6px solid #d55e00; background: #fff4ec; padding: 0.3em 1em; }
table.failed th, table.failed td { text-align: left; }
table.failed th[scope=row] { font-family: ui-monospace, monospace; word-break: break-all; }
</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<p class="meta">Generated {{.Generated}} by repot report. This page is self-contained: it loads nothing from the network.</p>
</header>
<aside class="simulation" aria-label="What was simulated">
{{range $i, $p := .Simulation}}<p>{{if eq $i 0}}<strong>What was simulated:</strong> {{end}}{{$p}}</p>
{{end}}</aside>
<nav class="contents" aria-label="Contents">Contents:
{{range .Sources}}<a href="#{{.ID}}">{{.Name}}</a>
{{end}}{{if .Schedule}}<a href="#schedule">Schedule history</a>{{end}}
</nav>
<main>
{{range .Sources}}
<article id="{{.ID}}">
<h2>{{.Name}}</h2>
<p class="meta">{{.Origin}}; {{.Records}} distinct runs.</p>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}
{{range .Sections}}{{template "section" .}}{{end}}
{{if .Models}}<details class="models"><summary>{{.ModelsSummary}}</summary>
<table><caption>Models</caption><thead><tr><th scope="col">model</th><th scope="col">served by</th><th scope="col">detail</th></tr></thead><tbody>
{{range .Models}}<tr><th scope="row">{{.Name}}</th><td>{{.ServedBy}}</td><td>{{.Detail}}</td></tr>
{{end}}</tbody></table></details>{{end}}
{{if .Provenance}}<details class="provenance"><summary>{{.ProvenanceSummary}}</summary>
<table class="provenance"><caption>Provenance: what produced these numbers</caption><thead><tr><th scope="col">model</th><th scope="col">item</th><th scope="col">value</th></tr></thead><tbody>
{{range .Provenance}}<tr><th scope="row">{{.Model}}</th><td>{{.Item}}</td><td class="value">{{.Value}}</td></tr>
{{end}}</tbody></table></details>{{end}}
{{if .Failures}}<details class="failures" id="{{.FailuresID}}"><summary>{{.FailuresSummary}}</summary>
{{with .Failures.Problem}}<p class="problem">{{.}}</p>
{{end}}{{range .Failures.Notes}}<p class="note">{{.}}</p>
{{end}}{{range .FailureGroups}}<details class="failure-group"><summary>{{.Summary}}</summary>
<table class="failed"><thead><tr><th scope="col">problem</th><th scope="col">environment</th><th scope="col">complexity</th><th scope="col">stopped</th></tr></thead><tbody>
{{range .Runs}}<tr><th scope="row">{{if .Href}}<a href="{{.Href}}">{{.ProblemID}}</a>{{else}}{{.ProblemID}} <span class="meta">(no trace)</span>{{end}}</th><td>{{.Environment}}</td><td>{{.Complexity}}</td><td>{{.StoppedReason}}</td></tr>
{{end}}</tbody></table></details>
{{end}}</details>{{end}}
</article>
{{end}}
{{if .Schedule}}<article id="schedule"><h2>Schedule history</h2>
{{range .Schedule}}{{template "section" .}}{{end}}
{{if .ScheduleDifferences}}<table class="provenance" id="schedule-differences"><caption>Runs that differ from the run they were compared with in more than time</caption><thead><tr><th scope="col">evaluation</th><th scope="col">compared with</th><th scope="col">differences</th></tr></thead><tbody>
{{range .ScheduleDifferences}}<tr><th scope="row">{{.Evaluation}}</th><td>{{.ComparedWith}}</td><td class="value">{{range $i, $d := .Differences}}{{if $i}}<br>{{end}}{{$d}}{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
</article>{{end}}
</main>
</body>
</html>
{{define "section"}}<section class="chart" id="{{.ID}}" aria-labelledby="{{.ID}}-h">
<h3 id="{{.ID}}-h">{{.Title}}</h3>
<p>{{.Intro}}</p>
<figure>{{.SVG}}</figure>
<table><caption>{{.Table.Caption}}</caption>
<thead><tr>{{range .Table.Header}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Table.Rows}}<tr>{{range $i, $c := .}}{{if eq $i 0}}<th scope="row">{{$c}}</th>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
</section>
{{end}}`))

// Package report turns evaluation results into one self-contained HTML page:
// charts drawn as SVG by gonum.org/v1/plot, each followed by a table of its
// numbers, and a statement of what was simulated. The page references
// nothing outside itself (no scripts, no fonts, no images to fetch), so it
// opens offline and can be attached to a ticket.
//
// The input model is a Report of Sources (one per `repot run` directory,
// exported record set or live evaluation) and an optional Schedule history.
// Every part is optional: a section whose data is absent is left out, so new
// kinds of results (GPU energy, Derail conditions, schedules) add sections
// without changing the others. The package knows nothing about Kubernetes;
// the cluster readers live in controllers/ and fill the same types.
package report

import (
	"time"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// Report is everything one page shows.
type Report struct {
	// Title is the page's heading.
	Title string
	// Generated is when the report was made; shown on the page.
	Generated time.Time
	// Sources are the result sets, each with its own sections.
	Sources []Source
	// Schedule is a schedule's history; nil leaves its section out.
	Schedule *Schedule
}

// Origin says where a Source's results came from.
type Origin string

// Origins.
const (
	OriginRunDir     Origin = "repot run directory"
	OriginExported   Origin = "records exported from a cluster"
	OriginEvaluation Origin = "live RepotEvaluation"
)

// Source is one set of results: the records of one run directory, one
// export or one evaluation, aggregated by analysis/summary.
type Source struct {
	// Name labels the source on the page, e.g. "default/demo" or "out/a".
	Name   string
	Origin Origin
	// Summary is summary.Aggregate over the source's records.
	Summary summary.Summary
	// Scaling is the capability-scaling sweep; nil (or no cells) leaves the
	// section out.
	Scaling *summary.ScalingReport
	// Models describes how each model was served, when known.
	Models []ModelInfo
	// Notes are lines shown under the source's heading (conditions of an
	// evaluation, problems reading it).
	Notes []string
	// Energy holds GPU-seconds and joules per model; empty leaves the
	// section out.
	Energy []ModelEnergy
	// Derail holds per-condition recovery results; empty leaves the section
	// out.
	Derail []DerailResult
	// Provenance says what produced the numbers (images, server
	// arguments, sampling, builds); empty leaves the table out.
	Provenance []ProvenanceEntry
	// Traces says where the source's traces are, for the links of its
	// failed runs.
	Traces Traces
	// Failures are the failed runs with links to their trace pages, set
	// by WriteTracePages; nil leaves the section out.
	Failures *Failures

	// combined marks a Combine of other sources, whose failed runs are
	// listed with those sources.
	combined bool
	// records are the records the summary was computed from (for Combine).
	records []contract.Record
}

// ServedBy is how a model's answers were produced.
type ServedBy string

// Ways a model is served.
const (
	// ServedSimulated: the project's simulated server (no real model).
	ServedSimulated ServedBy = "simulated"
	// ServedVLLM: a vLLM server the operator started.
	ServedVLLM ServedBy = "vllm"
	// ServedEndpoint: an existing OpenAI-compatible endpoint.
	ServedEndpoint ServedBy = "endpoint"
	// ServedUnknown: the source does not say (a bare run directory).
	ServedUnknown ServedBy = "unknown"
)

// ModelInfo is what is known about how a model was served.
type ModelInfo struct {
	Name     string   `json:"name"`
	ServedBy ServedBy `json:"servedBy"`
	// Detail is e.g. the simulated profile or the vLLM model id.
	Detail string `json:"detail,omitempty"`
}

// ProvenanceEntry is one fact of what produced a source's numbers, e.g.
// model "m", item "image: runner/run", value "repot@sha256:...". Model is
// AllModels for facts of the whole evaluation.
type ProvenanceEntry struct {
	Model string `json:"model"`
	Item  string `json:"item"`
	Value string `json:"value"`
}

// AllModels is ProvenanceEntry.Model for a fact of the whole evaluation.
const AllModels = "(all models)"

// ModelEnergy is the GPU use of one model's server over an evaluation.
type ModelEnergy struct {
	Model string `json:"model"`
	// GPUSeconds and Joules are totals over the evaluation; Solved is the
	// number of problems solved over all methods, the denominator of the
	// per-solved figures.
	GPUSeconds int64 `json:"gpuSeconds,omitempty"`
	Joules     int64 `json:"joules,omitempty"`
	Solved     int   `json:"solved"`
	// Simulated is true when the readings came from a simulated GPU.
	Simulated bool `json:"simulated,omitempty"`
}

// DerailResult is one model's recovery rate under one Derail condition.
type DerailResult struct {
	Model     string
	Condition string
	Rate      summary.Rate
}

// Schedule is the history of a schedule: one point per evaluation it
// started, per model and method.
type Schedule struct {
	// Name is namespace/name of the schedule.
	Name string `json:"name"`
	// Points are ordered by time.
	Points []SchedulePoint `json:"points"`
	// Differences are the runs that differed from the run they were
	// compared with in more than time, oldest first.
	Differences []RunDifferences `json:"differences,omitempty"`
}

// RunDifferences says in what, other than time, a scheduled run differed
// from the run it was compared with (status.history[].differences).
type RunDifferences struct {
	Evaluation   string   `json:"evaluation"`
	ComparedWith string   `json:"comparedWith"`
	Differences  []string `json:"differences"`
}

// SchedulePoint is one method's result on one model in one evaluation of a
// schedule.
type SchedulePoint struct {
	// Time is when the run was scheduled.
	Time       time.Time `json:"time"`
	Evaluation string    `json:"evaluation"`
	Model      string    `json:"model"`
	Method     string    `json:"method"`
	// Rate is the run's rate; a schedule's history keeps the percentage,
	// per-mille and interval but not always the counts (Total 0).
	Rate summary.Rate `json:"rate"`
	// Regression marks a point the schedule flagged as a significant drop
	// from the previous successful run.
	Regression bool `json:"regression,omitempty"`
	// Change is the change from the previous successful run in points,
	// e.g. "-12.5", with its p-value; empty without a comparison.
	Change string `json:"change,omitempty"`
	PValue string `json:"pValue,omitempty"`
}

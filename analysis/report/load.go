package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// SourceFile is the optional file beside records.jsonl that says where the
// records came from and how the models were served. `repot results export`
// writes it; `repot run` does not.
const SourceFile = "source.json"

// ScheduleFile is the optional file of an exported schedule's directory: its
// history as a Schedule in JSON. The directory's subdirectories are the
// exported runs.
const ScheduleFile = "schedule.json"

// SourceMeta is the content of SourceFile.
type SourceMeta struct {
	// Name is e.g. "default/demo".
	Name string `json:"name"`
	// Origin is what the records are, e.g. "records exported from a cluster".
	Origin Origin `json:"origin"`
	// Models says how each model was served.
	Models []ModelInfo `json:"models,omitempty"`
	// Notes are lines shown with the source (conditions, reading problems).
	Notes []string `json:"notes,omitempty"`
	// Energy is the GPU use per model from the evaluation's status, which
	// the records alone do not carry.
	Energy []ModelEnergy `json:"energy,omitempty"`
	// Provenance is what produced the numbers, from the evaluation's
	// status (status.models[].provenance, the problem-set hash and the
	// sandbox mode).
	Provenance []ProvenanceEntry `json:"provenance,omitempty"`
}

// FromRecords builds a Source from records: the summary, and the scaling
// sweep when two or more models have records.
func FromRecords(name string, origin Origin, recs []contract.Record) Source {
	s := Source{Name: name, Origin: origin, Summary: summary.Aggregate(recs), records: recs}
	if len(s.Summary.Models) >= 2 {
		sc := summary.Scaling(recs)
		s.Scaling = &sc
	}
	s.Derail = derailResults(s.Summary)
	return s
}

// derailConditions are the Derail-550 conditions in report order; a
// derail-550 run records each condition as the run's method.
var derailConditions = []string{"no_feedback", "error_only", "state_feedback", "state_plus_legal_actions", "repot-full", "repot-no-prefix", "repot-restart"}

// derailResults are the recovery rates per model and condition when the
// records are a Derail-550 run: some method is a condition only Derail has
// (repot-no-prefix and repot-restart alone are also ablations of the
// ordinary suites).
func derailResults(sum summary.Summary) []DerailResult {
	isDerail := false
	for _, m := range sum.Models {
		for _, ms := range m.Methods {
			for _, c := range derailConditions[:5] {
				isDerail = isDerail || ms.Method == c
			}
		}
	}
	if !isDerail {
		return nil
	}
	var out []DerailResult
	for _, c := range derailConditions {
		for _, m := range sum.Models {
			for _, ms := range m.Methods {
				if ms.Method == c && ms.Total > 0 {
					out = append(out, DerailResult{Model: m.Model, Condition: c, Rate: ms.Rate})
				}
			}
		}
	}
	return out
}

// LoadDir reads a `repot run` output directory (one with records.jsonl),
// or a directory whose subdirectories are run directories (each becomes a
// source, in name order), and the schedule history of an exported schedule
// (nil when the directory has none). Models named in simulated are marked
// simulated; other models are as source.json says, or unknown.
func LoadDir(dir string, simulated map[string]bool) ([]Source, *Schedule, error) {
	if _, err := os.Stat(filepath.Join(dir, contract.RecordsFile)); err == nil {
		s, err := loadRunDir(dir, dir, simulated)
		if err != nil {
			return nil, nil, err
		}
		return []Source{s}, nil, nil
	}
	sched, err := loadSchedule(dir)
	if err != nil {
		return nil, nil, err
	}
	srcs, err := loadSubdirs(dir, simulated)
	if err != nil && sched == nil {
		return nil, nil, err
	}
	return srcs, sched, nil
}

// loadSchedule reads dir/schedule.json, nil when absent.
func loadSchedule(dir string) (*Schedule, error) {
	b, err := os.ReadFile(filepath.Join(dir, ScheduleFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Schedule
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ScheduleFile), err)
	}
	sort.SliceStable(s.Points, func(i, j int) bool { return s.Points[i].Time.Before(s.Points[j].Time) })
	return &s, nil
}

func loadSubdirs(dir string, simulated map[string]bool) ([]Source, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), contract.RecordsFile)); err == nil {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s holds no %s, and none of its subdirectories does: give a repot run output directory (--out) or an export directory", dir, contract.RecordsFile)
	}
	sort.Strings(names)
	var out []Source
	for _, n := range names {
		s, err := loadRunDir(filepath.Join(dir, n), n, simulated)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// loadRunDir reads one directory's records (summary.json is recomputed from
// them, so a report never shows figures its records do not support) and its
// optional source.json.
func loadRunDir(dir, name string, simulated map[string]bool) (Source, error) {
	f, err := os.Open(filepath.Join(dir, contract.RecordsFile))
	if err != nil {
		return Source{}, err
	}
	recs, partial, err := contract.ReadRecords(f)
	f.Close()
	if err != nil {
		return Source{}, fmt.Errorf("%s: %w", filepath.Join(dir, contract.RecordsFile), err)
	}
	meta := SourceMeta{Name: name, Origin: OriginRunDir}
	b, err := os.ReadFile(filepath.Join(dir, SourceFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Source{}, err
	default:
		if err := json.Unmarshal(b, &meta); err != nil {
			return Source{}, fmt.Errorf("%s: %w", filepath.Join(dir, SourceFile), err)
		}
		if meta.Name == "" {
			meta.Name = name
		}
	}
	s := FromRecords(meta.Name, meta.Origin, recs)
	s.Notes, s.Energy, s.Provenance = meta.Notes, meta.Energy, meta.Provenance
	if partial > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("The last line of %s was cut off mid-write (%d bytes) and is left out.", contract.RecordsFile, partial))
	}
	s.Models = mergeModels(s.Summary, meta.Models, simulated)
	s.Traces = dirTraces(dir)
	if len(s.Provenance) == 0 {
		p, err := runProvenance(dir, s.Summary)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("The provenance is left out: %v.", err))
		}
		s.Provenance = p
	}
	return s, nil
}

// runProvenance is the provenance `repot run` wrote into a run directory
// (contract.ProvenanceFile): the runner's build, what the server reported on
// /v1/models and the request parameters, for the directory's model (or
// AllModels when it holds several). Nothing without the file; an unreadable
// file is an error the caller notes (the records still make a report).
func runProvenance(dir string, sum summary.Summary) ([]ProvenanceEntry, error) {
	path := filepath.Join(dir, contract.ProvenanceFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := contract.ParseProvenance(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	model := AllModels
	if len(sum.Models) == 1 {
		model = sum.Models[0].Model
	}
	var out []ProvenanceEntry
	add := func(item, value string) {
		if value != "" {
			out = append(out, ProvenanceEntry{Model: model, Item: item, Value: value})
		}
	}
	for _, m := range p.ServedModels {
		add("served model (/v1/models)", m.Describe())
	}
	add("server report error", p.ServerError)
	names := make([]string, 0, len(p.Request))
	for k := range p.Request {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		add("request: "+k, string(p.Request[k]))
	}
	add("system prefix", p.SystemPrefix)
	add("runner repot version", p.RepotVersion)
	add("runner repot commit", p.RepotCommit)
	return out, nil
}

// mergeModels lists every model of the summary with what is known of how it
// was served; --simulated overrides what the directory says.
func mergeModels(sum summary.Summary, known []ModelInfo, simulated map[string]bool) []ModelInfo {
	byName := map[string]ModelInfo{}
	for _, m := range known {
		byName[m.Name] = m
	}
	var out []ModelInfo
	for _, m := range sum.Models {
		info, ok := byName[m.Model]
		if !ok {
			info = ModelInfo{Name: m.Model, ServedBy: ServedUnknown}
		}
		if simulated[m.Model] {
			info.ServedBy = ServedSimulated
			if info.Detail == "" {
				info.Detail = "marked simulated with --simulated"
			}
		}
		out = append(out, info)
	}
	return out
}

// Combine merges the record sets of sources into one source named name, so
// that models run in separate directories appear side by side and in one
// capability-scaling sweep. Energy, Derail results and provenance are not
// combined.
func Combine(name string, sources []Source) Source {
	var recs []contract.Record
	var models []ModelInfo
	var notes []string
	for _, s := range sources {
		recs = append(recs, s.records...)
		models = append(models, s.Models...)
		for _, n := range s.Notes {
			notes = append(notes, s.Name+": "+n)
		}
	}
	out := FromRecords(name, OriginRunDir, recs)
	seen := map[string]bool{}
	for _, m := range models {
		if !seen[m.Name] {
			seen[m.Name] = true
			out.Models = append(out.Models, m)
		}
	}
	out.Notes = notes
	out.combined = true
	return out
}

// dirTraces are the traces of a run directory: its traces.jsonl.
func dirTraces(dir string) Traces {
	path := filepath.Join(dir, contract.TracesFile)
	if _, err := os.Stat(path); err != nil {
		return Traces{Missing: fmt.Sprintf("%s holds no %s, so the failed runs are not linked to their traces (repot run writes it; an export of records holds none: report an evaluation with --evaluation NAME to read its traces from its store).", dir, contract.TracesFile)}
	}
	return FileTraces(path)
}

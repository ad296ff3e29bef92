package report

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"

	"repot.dev/repot-operator/analysis/summary"
)

// Traces says where a source's traces are, so that its failed runs can link
// to them (WriteTracePages).
type Traces struct {
	// From names them on the page, e.g. "out/a/traces.jsonl" or "the
	// artifact store s3://bucket/ns/name/uid/".
	From string
	// Each streams every trace line to fn (the line is only valid during
	// the call); nil when there are none to read.
	Each func(ctx context.Context, fn func(line []byte) error) error
	// Missing says, when Each is nil, why there are no traces and what
	// would give them.
	Missing string
	// Problem says, when Each is nil, what failed finding them (an error
	// of the store, of the credentials): the report says it and warns.
	Problem string
	// Warning is shown above the links, e.g. that the store's upload is
	// not complete.
	Warning string
}

// FileTraces are the traces of a JSONL file, read line by line.
func FileTraces(path string) Traces {
	return Traces{From: path, Each: func(ctx context.Context, fn func([]byte) error) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
		for sc.Scan() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(sc.Bytes()); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		return nil
	}}
}

// maxTraceLine bounds one trace line (a run's every prompt and reply), as
// the artifact store's reader does.
const maxTraceLine = 64 << 20

// FailedRun is one run whose problem the model did not solve: finished,
// unsuccessful and not ended by an infrastructure error (those are reported
// apart and never counted as failed problems).
type FailedRun struct {
	Model, Method, ProblemID string
	Environment              string
	Complexity               int
	StoppedReason            string
	// Href is the run's trace page relative to the report ("" when no
	// page was written).
	Href string
}

// Failures are a source's failed runs and what is known of their traces.
type Failures struct {
	Runs []FailedRun
	// Notes say where the traces came from, or why runs have no link.
	Notes []string
	// Problem says what failed reading the traces ("" when nothing did).
	Problem string
}

// Linked is the number of runs with a trace page.
func (f *Failures) Linked() int {
	n := 0
	for _, r := range f.Runs {
		if r.Href != "" {
			n++
		}
	}
	return n
}

// FailedRuns are the source's failed runs, each run once, ordered by model,
// method and problem. Records of the same model, method and problem that
// differ only in a Derail checkpoint statement count once: their traces
// are told apart by the same three names.
func FailedRuns(s Source) []FailedRun {
	recs, _ := summary.Dedupe(s.records)
	seen := map[runKey]bool{}
	var out []FailedRun
	for _, r := range recs {
		if r.Success || r.InfraError != "" {
			continue
		}
		k := runKey{r.Model, r.Method, r.ProblemID}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, FailedRun{Model: r.Model, Method: r.Method, ProblemID: r.ProblemID,
			Environment: r.Environment, Complexity: r.Complexity, StoppedReason: r.StoppedReason})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		return a.ProblemID < b.ProblemID
	})
	return out
}

// runKey names a run as its trace does.
type runKey struct{ model, method, problem string }

// failureGroup is one model's failed runs with one method.
type failureGroup struct {
	Model, Method string
	// Summary labels the folded group.
	Summary string
	Runs    []FailedRun
}

// groupFailures groups runs (ordered as FailedRuns orders them) per model
// and method.
func groupFailures(runs []FailedRun) []failureGroup {
	var out []failureGroup
	for _, r := range runs {
		if n := len(out); n == 0 || out[n-1].Model != r.Model || out[n-1].Method != r.Method {
			out = append(out, failureGroup{Model: r.Model, Method: r.Method})
		}
		g := &out[len(out)-1]
		g.Runs = append(g.Runs, r)
	}
	for i := range out {
		g := &out[i]
		linked := (&Failures{Runs: g.Runs}).Linked()
		g.Summary = fmt.Sprintf("%s, %s: %s, %d linked", g.Model, g.Method, counted(len(g.Runs), "failed run"), linked)
	}
	return out
}

// failuresSummary labels a source's folded section of failed runs.
func failuresSummary(f *Failures) string {
	return fmt.Sprintf("Failed problems and their traces: %s, %d linked to their trace", counted(len(f.Runs), "failed run"), f.Linked())
}

// maxComponent bounds a path component made from a name.
const maxComponent = 80

// PathComponent makes one safe file-name component of an untrusted name (a
// problem id, a model): letters, digits, '.', '-' and '_' only, never "."
// or "..", never starting with a dot, at most about 100 bytes. A name that
// had to change gets a hash of itself appended, so two names never share a
// component.
func PathComponent(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if strings.HasPrefix(s, ".") || s == "" {
		s = "_" + s
	}
	if s == name && len(s) <= maxComponent {
		return s
	}
	if len(s) > maxComponent {
		s = s[:maxComponent]
	}
	h := sha256.Sum256([]byte(name))
	return s + "-" + hex.EncodeToString(h[:6])
}

package results

import (
	"fmt"
	"sort"
	"strings"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// JudgeRow is one model x method line of repot judge's table. Runs ended by
// an infrastructure error are left out, as the status leaves them out.
type JudgeRow struct {
	Model, Method string
	// Runs counts the distinct runs (model, problem, method) with a ledger
	// record or a stored trace.
	Runs int
	// StatusSolved is the status's solved figure; -1 when the status has
	// none for this model and method.
	StatusSolved int
	LedgerSolved int
	TracesSolved int
	// JudgeSolved counts the runs the judge re-judged as solved; NotJudged
	// the runs it could not re-judge.
	JudgeSolved int
	NotJudged   int
	// Disagreements counts the disagreements of this model and method.
	Disagreements int
}

// JudgeDisagreement is one difference the audit found: of one run
// (ProblemID set), or of the status's figure of a model and method
// (ProblemID "").
type JudgeDisagreement struct {
	Model, Method, ProblemID string
	What                     string
}

// JudgeReport is repot judge's audit of an evaluation.
type JudgeReport struct {
	Rows          []JudgeRow
	Disagreements []JudgeDisagreement
	// Malformed are the trace lines that are not traces, "line N: why".
	Malformed []string
	// NotJudged counts the runs not re-judged, by reason.
	NotJudged []JudgeCount
	// InfraErrors counts the traces of runs ended by an infrastructure
	// error (left out); LeftOut the traces of runs whose record the status
	// leaves out (an infrastructure error or a budget stop recorded);
	// DuplicateTraces the other traces of a run traced more than once (the
	// one that agrees with its record counts, else the first).
	InfraErrors, LeftOut, DuplicateTraces int
}

// JudgeCount is a reason and how many runs it applies to.
type JudgeCount struct {
	Reason string
	Runs   int
}

type judgeKey struct{ model, problem, method string }

// CompareJudged compares the judge's verdicts on an evaluation's stored
// traces with the traces' own success, the ledger records (as the operator
// counts them: EvaluationResults.Records) and the status's solved counts.
// Each run is compared once; rows follow spec.models and the evaluation's
// methods, then any other model or method met, sorted.
func CompareJudged(e *repotv1.RepotEvaluation, records []contract.Record, verdicts []contract.TraceVerdict) JudgeReport {
	var rep JudgeReport
	// The records the status counts; the runs it leaves out (an
	// infrastructure error, a run aborted by a budget stop) are left out
	// here too, traces and all.
	ledger := map[judgeKey]contract.Record{}
	leftOut := map[judgeKey]bool{}
	for _, r := range records {
		k := judgeKey{r.Model, r.ProblemID, r.Method}
		if r.InfraError != "" || r.Aborted {
			leftOut[k] = true
			continue
		}
		if _, ok := ledger[k]; !ok {
			ledger[k] = r
		}
	}
	// Execution is at least once: a run cut off after its trace was stored
	// and before its record was written runs again, and both traces are
	// stored. The one that agrees with the record is the recorded run's;
	// without one, the first.
	traces := map[judgeKey]contract.TraceVerdict{}
	for _, v := range verdicts {
		switch {
		case v.Malformed != "":
			rep.Malformed = append(rep.Malformed, fmt.Sprintf("line %d: %s", v.Line, v.Malformed))
			continue
		case v.InfraError:
			rep.InfraErrors++
			continue
		}
		k := judgeKey{v.Model, v.ProblemID, v.Method}
		if _, recorded := ledger[k]; leftOut[k] && !recorded {
			rep.LeftOut++
			continue
		}
		if prev, ok := traces[k]; ok {
			rep.DuplicateTraces++
			if rec, recorded := ledger[k]; !recorded || prev.TraceSuccess == rec.Success || v.TraceSuccess != rec.Success {
				continue
			}
		}
		traces[k] = v
	}
	keys := map[judgeKey]bool{}
	for k := range traces {
		keys[k] = true
	}
	for k := range ledger {
		keys[k] = true
	}
	sorted := make([]judgeKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.model != b.model {
			return a.model < b.model
		}
		if a.method != b.method {
			return a.method < b.method
		}
		return a.problem < b.problem
	})

	type mm struct{ model, method string }
	rows := map[mm]*JudgeRow{}
	row := func(model, method string) *JudgeRow {
		k := mm{model, method}
		if rows[k] == nil {
			rows[k] = &JudgeRow{Model: model, Method: method, StatusSolved: -1}
		}
		return rows[k]
	}
	notJudged := map[string]int{}
	var perRun []JudgeDisagreement
	for _, k := range sorted {
		r := row(k.model, k.method)
		r.Runs++
		rec, inLedger := ledger[k]
		v, traced := traces[k]
		if inLedger && rec.Success {
			r.LedgerSolved++
		}
		if traced && v.TraceSuccess {
			r.TracesSolved++
		}
		var what []string
		switch {
		case !traced:
			what = append(what, "no stored trace")
		case v.Inconsistent != "":
			what = append(what, "the trace is inconsistent: "+v.Inconsistent)
		case v.Judged:
			if v.Success {
				r.JudgeSolved++
			}
			if v.Success != v.TraceSuccess {
				what = append(what, fmt.Sprintf("judge %s, trace %s", solved(v.Success), solved(v.TraceSuccess)))
			}
			if inLedger && v.Success != rec.Success {
				what = append(what, fmt.Sprintf("judge %s, ledger %s", solved(v.Success), solved(rec.Success)))
			}
		default:
			r.NotJudged++
			notJudged[v.NotJudged]++
		}
		switch {
		case !inLedger:
			what = append(what, "no ledger record")
		case traced && rec.Success != v.TraceSuccess:
			what = append(what, fmt.Sprintf("ledger %s, trace %s", solved(rec.Success), solved(v.TraceSuccess)))
		}
		if len(what) > 0 {
			if traced && v.Detail != "" && v.Judged {
				what = append(what, "judge: "+v.Detail)
			}
			r.Disagreements++
			perRun = append(perRun, JudgeDisagreement{Model: k.model, Method: k.method, ProblemID: k.problem, What: strings.Join(what, "; ")})
		}
	}

	// The status's figures, compared with the ledger's: the status counts
	// the same records.
	var statusDis []JudgeDisagreement
	for _, ms := range e.Status.Models {
		for _, m := range ms.Methods {
			r := row(ms.Name, string(m.Method))
			r.StatusSolved = int(m.Solved)
			if r.StatusSolved != r.LedgerSolved {
				r.Disagreements++
				statusDis = append(statusDis, JudgeDisagreement{Model: ms.Name, Method: string(m.Method),
					What: fmt.Sprintf("status solved %d, ledger solved %d", r.StatusSolved, r.LedgerSolved)})
			}
		}
	}

	// Row order: spec.models and the evaluation's methods first.
	modelRank, methodRank := map[string]int{}, map[string]int{}
	for i, m := range e.Spec.Models {
		modelRank[m.Name] = i + 1
	}
	for i, m := range e.Spec.MethodsOrDefault() {
		methodRank[string(m)] = i + 1
	}
	less := func(am, ame, bm, bme string) bool {
		if ra, rb := rank(modelRank, am), rank(modelRank, bm); ra != rb {
			return ra < rb
		}
		if am != bm {
			return am < bm
		}
		if ra, rb := rank(methodRank, ame), rank(methodRank, bme); ra != rb {
			return ra < rb
		}
		return ame < bme
	}
	for _, r := range rows {
		rep.Rows = append(rep.Rows, *r)
	}
	sort.Slice(rep.Rows, func(i, j int) bool {
		return less(rep.Rows[i].Model, rep.Rows[i].Method, rep.Rows[j].Model, rep.Rows[j].Method)
	})
	rep.Disagreements = append(statusDis, perRun...)
	sort.SliceStable(rep.Disagreements, func(i, j int) bool {
		a, b := rep.Disagreements[i], rep.Disagreements[j]
		if a.Model != b.Model || a.Method != b.Method {
			return less(a.Model, a.Method, b.Model, b.Method)
		}
		return a.ProblemID < b.ProblemID
	})
	for reason, n := range notJudged {
		rep.NotJudged = append(rep.NotJudged, JudgeCount{Reason: reason, Runs: n})
	}
	sort.Slice(rep.NotJudged, func(i, j int) bool { return rep.NotJudged[i].Reason < rep.NotJudged[j].Reason })
	return rep
}

// rank places names of the spec first, in its order.
func rank(r map[string]int, name string) int {
	if n, ok := r[name]; ok {
		return n
	}
	return len(r) + 1
}

func solved(b bool) string {
	if b {
		return "solved"
	}
	return "not solved"
}

// Found reports whether the audit found anything wrong: a disagreement or
// a line that is not a trace.
func (r *JudgeReport) Found() bool { return len(r.Disagreements) > 0 || len(r.Malformed) > 0 }

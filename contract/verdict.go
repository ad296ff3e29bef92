package contract

// TraceVerdict is what an independent re-judging of one stored trace line
// found (repot judge): the engine's judge (runner/judge) writes it, the
// operator's command compares it with the ledger and the status. It lives
// in the contract because the two sides may not import each other.
type TraceVerdict struct {
	// Line is the 1-based position of the trace line in the stream.
	Line int `json:"line"`
	// Malformed says why the line is not a trace ("" when it is one); the
	// other fields are then empty.
	Malformed string `json:"malformed,omitempty"`

	Model     string `json:"model"`
	Method    string `json:"method"`
	ProblemID string `json:"problem_id"`
	// InfraError is set for a run that ended in an infrastructure error:
	// left out of the audit, as the status leaves it out.
	InfraError bool `json:"infra_error,omitempty"`
	// TraceSuccess is the trace's own success field.
	TraceSuccess bool `json:"trace_success"`

	// Judged reports whether the judge recomputed the verdict; when it did
	// not, NotJudged says why.
	Judged    bool   `json:"judged"`
	NotJudged string `json:"not_judged,omitempty"`
	// Success is the recomputed verdict (Judged only).
	Success bool `json:"success"`
	// Inconsistent says what in the trace contradicts itself (for example
	// a recorded program that is not the completion's), "" when nothing
	// does; an inconsistent trace is a disagreement whatever its verdict.
	Inconsistent string `json:"inconsistent,omitempty"`
	// Detail is how the judge decided: which call's plan, replayed from
	// where, ended how.
	Detail string `json:"detail,omitempty"`
}

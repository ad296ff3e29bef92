package runner

import (
	"encoding/json"

	"repot.dev/repot-operator/runner/model"
)

// Call purposes in traces.
const (
	PurposeInitial    = "initial"
	PurposeFreshRetry = "fresh_retry"
	PurposeRepair     = "repair"
)

// Trace is one run's full trace: one JSONL line of traces.jsonl. Its
// top-level fields are those the paper's summary tooling reads (REPOT.md
// section 6); Calls holds every model call in detail.
type Trace struct {
	ProblemID     string `json:"problem_id"`
	Environment   string `json:"environment"`
	Complexity    int    `json:"complexity"`
	Model         string `json:"model"`
	Method        string `json:"method"`
	Success       bool   `json:"success"`
	StoppedReason string `json:"stopped_reason"`
	// TokensIn and TokensOut are the prompt and completion token sums.
	TokensIn  int `json:"tokens_in"`
	TokensOut int `json:"tokens_out"`
	// WallTime is the run's wall time in seconds (traces only; summaries
	// carry no floats).
	WallTime float64       `json:"wall_time"`
	Metadata TraceMetadata `json:"metadata"`
	Calls    []CallTrace   `json:"calls"`
}

// TraceMetadata is the run's bookkeeping.
type TraceMetadata struct {
	Route                 string `json:"route"`
	RepairUsed            bool   `json:"repair_used"`
	Calls                 int    `json:"calls"`
	CachedTokens          int    `json:"cached_tokens"`
	ReasoningTokens       int    `json:"reasoning_tokens"`
	InitialPlanLen        int    `json:"initial_plan_len"`
	InitialPrefixPermille int    `json:"initial_prefix_permille"`
	InitialSuccess        bool   `json:"initial_success"`
	// FinalPrefixLen is the length of the verified plan the run ended with.
	FinalPrefixLen int    `json:"final_prefix_len"`
	InfraError     string `json:"infra_error,omitempty"`
	InfraRetries   int    `json:"infra_retries"`
	// Problem is the problem's own metadata, as published.
	Problem json.RawMessage `json:"problem,omitempty"`
	// Derail is the checkpoint of a Derail-550 run.
	Derail *DerailInfo `json:"derail,omitempty"`
	// SandboxMode is the confinement the programs ran under, for example
	// "none, seccomp, landlock ABI 6".
	SandboxMode string `json:"sandbox_mode,omitempty"`
}

// CallTrace is one model call and everything done with its reply.
type CallTrace struct {
	Index   int             `json:"index"`
	Purpose string          `json:"purpose"`
	Prompt  []model.Message `json:"prompt"`

	Completion   string      `json:"completion"`
	FinishReason string      `json:"finish_reason"`
	Usage        model.Usage `json:"usage"`
	LatencyMS    int64       `json:"latency_ms"`
	Retries      int         `json:"retries"`
	InfraError   string      `json:"infra_error,omitempty"`

	Code           string `json:"code"`
	Stdout         string `json:"stdout"`
	Stderr         string `json:"stderr"`
	ExitCode       int    `json:"exit_code"`
	SandboxFailure string `json:"sandbox_failure,omitempty"`
	SandboxMS      int64  `json:"sandbox_ms"`
	ParseError     string `json:"parse_error,omitempty"`

	Plan   []json.RawMessage `json:"plan"`
	Replay *ReplayTrace      `json:"replay,omitempty"`
	// Outcome is this call's stop reason (StopGoal, StopInvalidMove, ...).
	Outcome string `json:"outcome"`
}

// ReplayTrace is a replay result as traces record it.
type ReplayTrace struct {
	// From is the number of verified moves before this call's plan (the
	// checkpoint of a suffix repair; 0 for a plan from the initial state).
	From           int             `json:"from"`
	PrefixLen      int             `json:"prefix_len"`
	PlanLen        int             `json:"plan_len"`
	PrefixPermille int             `json:"prefix_permille"`
	K              int             `json:"k"`
	Error          string          `json:"error,omitempty"`
	Kind           string          `json:"kind,omitempty"`
	ReachedGoal    bool            `json:"reached_goal"`
	StopReason     string          `json:"stop_reason"`
	State          json.RawMessage `json:"state"`
}

func replayTrace(from int, r ReplayResult) *ReplayTrace {
	var state json.RawMessage
	if r.State != nil {
		if b, err := r.State.MarshalJSON(); err == nil {
			state = b
		}
	}
	return &ReplayTrace{
		From: from, PrefixLen: len(r.Prefix), PlanLen: r.PlanLen, PrefixPermille: r.PrefixPermille(),
		K: r.K, Error: r.Error, Kind: r.Kind, ReachedGoal: r.ReachedGoal, StopReason: r.StopReason, State: state,
	}
}

package contract

import "encoding/json"

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
	Index   int       `json:"index"`
	Purpose string    `json:"purpose"`
	Prompt  []Message `json:"prompt"`

	Completion   string `json:"completion"`
	FinishReason string `json:"finish_reason"`
	Usage        Usage  `json:"usage"`
	LatencyMS    int64  `json:"latency_ms"`
	Retries      int    `json:"retries"`
	InfraError   string `json:"infra_error,omitempty"`

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

// DerailInfo is what a Derail run's trace records about the case.
type DerailInfo struct {
	CaseID              string `json:"case_id"`
	ProblemID           string `json:"problem_id"`
	InjectionStep       int    `json:"injection_step"`
	InjectionType       string `json:"injection_type"`
	Condition           string `json:"condition"`
	CheckpointStatement string `json:"checkpoint_statement"`
	// Candidates are the judged candidates of a prompted run; Chosen
	// indexes them (-1: none).
	Candidates []JudgedCandidate `json:"candidates,omitempty"`
	Chosen     *int              `json:"chosen,omitempty"`
}

// JudgedCandidate is one distinct move-list candidate of a prompted reply,
// replayed from the checkpoint.
type JudgedCandidate struct {
	// Start is the offset of its first occurrence; Final reports whether any
	// occurrence counts as final.
	Start  int    `json:"start"`
	Source string `json:"source"`
	Final  bool   `json:"final"`
	Moves  int    `json:"moves"`
	// Valid is how many leading moves are legal.
	Valid       int    `json:"valid"`
	ReachedGoal bool   `json:"reached_goal"`
	StopReason  string `json:"stop_reason"`
	Error       string `json:"error,omitempty"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// NoThinkPrefix is the system-prompt prefix that turns extended thinking off
// for the open-weights models of the paper (Qwen-style chat templates); the
// simulated server reads it as such a model would.
const NoThinkPrefix = "/no_think"

// Usage is the server's token accounting for one call.
type Usage struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	// Cached is usage.prompt_tokens_details.cached_tokens.
	Cached int `json:"cached"`
	// Reasoning is usage.completion_tokens_details.reasoning_tokens.
	Reasoning int `json:"reasoning"`
}

// Package summary turns run records into the evaluation's figures. It is the
// one definition of "success rate", "route" and "cost relative to pot", used
// by `repot run` and by the operator's status alike. It imports nothing from
// Kubernetes or the model client.
package summary

import "sort"

// Method names.
const (
	MethodPoT           = "pot"
	MethodPoTRetry      = "pot-retry"
	MethodRePoT         = "repot"
	MethodAdaptive      = "repot-adaptive"
	MethodRePoTNoPrefix = "repot-no-prefix"
	MethodRePoTRestart  = "repot-restart"
)

// Routes of repot-adaptive (and the route names used for the other methods).
const (
	RouteInitialSuccess   = "initial_pot_success"
	RouteFreshEmptyPlan   = "fresh_retry_empty_plan"
	RouteFreshShortPrefix = "fresh_retry_short_prefix"
	RouteSuffixRepair     = "suffix_repair"
	RouteFreshRetry       = "fresh_retry"   // pot-retry's second call
	RouteNoExtraCall      = "no_extra_call" // pot's failure, or a method that stopped after one call
)

// Record is one finished run: one problem solved by one method against one
// model. It is what the ledger stores (one JSON object per line) and what
// Aggregate consumes. Raw model text is never part of a Record: it lives in
// the traces. The key (Model, ProblemID, Method) identifies a run; a ledger
// that holds a key twice counts it once.
type Record struct {
	Model       string `json:"model"`
	ProblemID   string `json:"problem_id"`
	Environment string `json:"environment"`
	Complexity  int    `json:"complexity"`
	Method      string `json:"method"`

	Success bool `json:"success"`
	// StoppedReason: "goal", "invalid_move", "format_error", "max_steps",
	// "plan_exhausted", "no_plan", "program_error", "sandbox_rejected",
	// "truncated", "infra_error".
	StoppedReason string `json:"stopped_reason"`
	// Route is the adaptive route, or for repot "initial_pot_success" /
	// "suffix_repair" ("no_extra_call" with a repair budget of 0), for pot-retry "initial_pot_success" / "fresh_retry",
	// for pot "initial_pot_success" / "no_extra_call".
	Route string `json:"route"`
	// RepairUsed reports whether a suffix-repair call was made.
	RepairUsed bool `json:"repair_used,omitempty"`

	Calls            int `json:"calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens"`

	// InitialPlanLen is the number of moves the first program printed.
	InitialPlanLen int `json:"initial_plan_len"`
	// InitialPrefixPermille is the verified prefix fraction of the first plan
	// in thousandths (0 for an empty plan).
	InitialPrefixPermille int `json:"initial_prefix_permille"`
	// InitialSuccess reports whether the first call alone solved the problem.
	InitialSuccess bool `json:"initial_success"`

	// InfraError is set when an infrastructure failure (not the model) ended
	// the run after retries; such a run is reported apart and never counted as
	// a failed problem.
	InfraError string `json:"infra_error,omitempty"`
	// InfraRetries counts model-call retries that infrastructure faults caused.
	InfraRetries int `json:"infra_retries,omitempty"`

	WallMillis int64 `json:"wall_ms"`

	// StartedUnixMilli is when the run started (Unix milliseconds); with
	// WallMillis it is the span during which the run had a request in flight
	// or about to be, from which the operator derives a server's idle time.
	// 0 in records written before it existed.
	StartedUnixMilli int64 `json:"started_unix_ms,omitempty"`
	// InFlightLimit is the model calls in flight the runner's gate admitted
	// when the run was written: the adaptive concurrency controller's limit
	// then, or the fixed bound. SettledInFlight reads a shard's settled
	// concurrency from its records. 0 in records written before it existed.
	InFlightLimit int `json:"in_flight_limit,omitempty"`
	// Derail is set on Derail-550 records of the current protocol (schema
	// 2, REPOT.md section 7); Method is then the condition.
	Derail *DerailRecord `json:"derail,omitempty"`

	// Rounds is the repair loop round by round (Round), for runs of repot
	// with a repair budget above 1 or a noisy verifier, and of repot-vrr;
	// absent otherwise.
	Rounds []Round `json:"rounds,omitempty"`
	// Votes is the number of verifier votes cast on each committed plan
	// (the noisy-verifier ablation); 0 means one exact verdict.
	Votes int `json:"votes,omitempty"`
	// LoopStop says why the repair loop stopped (LoopAccepted, LoopBudget,
	// LoopGain, LoopGuard, LoopError); set with Rounds.
	LoopStop string `json:"loop_stop,omitempty"`
	// VRRCalibration marks a repot-vrr run of the calibration slice: it ran
	// the whole budget like fixed-R repot, and its rounds calibrate the
	// estimates of the other runs.
	VRRCalibration bool `json:"vrr_calibration,omitempty"`
}

// Key identifies a run for exactly-once counting. A Derail record's key also
// names the protocol schema and the checkpoint statement, so records of the
// earlier protocol, or of the other statement, are never taken for it.
func (r Record) Key() string {
	k := r.Model + "\x00" + r.ProblemID + "\x00" + r.Method
	if r.Derail != nil {
		k += derailKeySeparator + r.Derail.CheckpointStatement
	}
	return k
}

// MethodVRR is repot with a repair loop that stops by expected gain per
// token (docs/vrr.md).
const MethodVRR = "repot-vrr"

// Loop stop reasons (Record.LoopStop) of a repair loop that records rounds.
const (
	// LoopAccepted: the verifier's verdict on the committed plan accepted it
	// (with an exact verifier: the plan reached the goal).
	LoopAccepted = "accepted"
	// LoopBudget: the repair budget R was spent.
	LoopBudget = "budget"
	// LoopGain: repot-vrr's estimated gain of the next round per token fell
	// to tau or below.
	LoopGain = "gain_below_tau"
	// LoopGuard: VRR-Guard ran (the estimated J was below its bound) and
	// spent the budget or saw the incumbent accepted by every vote.
	LoopGuard = "guard"
	// LoopError: a model call failed for good (an infrastructure error) or
	// the checkpoint could not be built.
	LoopError = "error"
)

// Round is the committed plan of a run after one round of its repair loop:
// Rounds[0] is the first plan, Rounds[k] the plan committed after repair
// call k. It is kept small (short keys, zero values left out): a ledger
// holds one per round of every run that records rounds.
type Round struct {
	// Valid is the truth: the committed plan reaches the goal under exact
	// replay, whatever the (possibly noisy) verdict said.
	Valid bool `json:"v,omitempty"`
	// Prefix is the committed plan's verified prefix length.
	Prefix int `json:"p,omitempty"`
	// Accepts counts the verifier votes (of Record.Votes) that accepted the
	// committed plan; the observed verdict is a strict majority.
	Accepts int `json:"a,omitempty"`
	// Tokens are the prompt and completion tokens of the round's call.
	Tokens int `json:"t,omitempty"`
	// Kept reports that VRR-Guard kept its incumbent over the round's
	// candidate.
	Kept bool `json:"kept,omitempty"`
	// NoCall reports a round that made no repair call: the verdict that
	// opened it accepted the committed plan, which the round only
	// verified again (a noisy loop keeps verifying until its budget).
	NoCall bool `json:"n,omitempty"`
}

// Accepted reports whether the observed verdict on the round's plan, from
// votes votes (0 means 1), accepted it: a strict majority of accepting
// votes.
func (r Round) Accepted(votes int) bool { return 2*r.Accepts > max(votes, 1) }

// SettledInFlight is the concurrency a shard settled at, from its records
// (one shard's ledger): the median InFlightLimit of the records that carry
// one, and whether any did. The operator shows it per shard in status.
func SettledInFlight(recs []Record) (int, bool) {
	var ls []int
	for _, r := range recs {
		if r.InFlightLimit > 0 {
			ls = append(ls, r.InFlightLimit)
		}
	}
	if len(ls) == 0 {
		return 0, false
	}
	sort.Ints(ls)
	return ls[len(ls)/2], true
}

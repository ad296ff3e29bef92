package contract

import "slices"

// Method names: Record.Method of a PuzzleZoo run, `repot run --methods` and
// the API's spec.methods.
const (
	MethodPoT           = "pot"
	MethodPoTRetry      = "pot-retry"
	MethodRePoT         = "repot"
	MethodAdaptive      = "repot-adaptive"
	MethodRePoTNoPrefix = "repot-no-prefix"
	MethodRePoTRestart  = "repot-restart"
	// MethodVRR is repot with a repair loop that stops by expected gain per
	// token (docs/vrr.md).
	MethodVRR = "repot-vrr"
	// MethodCoT is chain of thought: one plain prompt for the whole move
	// list, its actions read from the reply, replayed once.
	MethodCoT = "cot"
	// MethodSelfConsistency draws up to k CoT samples and keeps the first
	// that reaches the goal, else the longest attempt.
	MethodSelfConsistency = "self-consistency"
	// MethodVEX is verified execution: chunks of moves proposed in a loop,
	// the verifier committing each chunk's valid prefix.
	MethodVEX = "vex"
)

// PaperMethods are the seven methods of the paper's comparison table, in
// its order: the floor (cot, self-consistency), the PoT baselines, the
// upper bound (vex) and RePoT.
var PaperMethods = []string{MethodCoT, MethodSelfConsistency, MethodPoT, MethodPoTRetry, MethodVEX, MethodRePoT, MethodAdaptive}

// DefaultMethods are the methods run when none are named.
var DefaultMethods = []string{MethodPoT, MethodPoTRetry, MethodRePoT, MethodAdaptive}

// Derail-550 conditions: the record's Method of a Derail run (schema 2),
// and the checkpoint statements of repot-full and repot-no-prefix.
const (
	CondNoFeedback    = "no_feedback"
	CondErrorOnly     = "error_only"
	CondStateFeedback = "state_feedback"
	CondStateLegal    = "state_plus_legal_actions"
	CondRePoTFull     = "repot-full"
	CondRePoTNoPrefix = "repot-no-prefix"
	CondRePoTRestart  = "repot-restart"
	// CondStateGuard is the step-by-step agent: one action per call from
	// the legal list, with per-state tabu and loop recovery.
	CondStateGuard = "stateguard-rollback"
	// CondVEXFull, CondVEXNoPrefix and CondVEXRestart run VEX from the
	// checkpoint with the prefix shown, from the checkpoint with it hidden,
	// and from the source problem's initial state.
	CondVEXFull     = "vex-full"
	CondVEXNoPrefix = "vex-no-prefix"
	CondVEXRestart  = "vex-restart-from-initial"
	StatementPaper  = "paper"
	StatementFull   = "full"
	// DerailSchema is DerailRecord.Schema of the current protocol.
	DerailSchema = 2
)

// DerailConditions are the eleven conditions in summary order: the four
// prompted ones, the step-by-step agent, then the three RePoT ones and the
// three VEX ones.
var DerailConditions = []string{
	CondNoFeedback, CondErrorOnly, CondStateFeedback, CondStateLegal, CondStateGuard,
	CondRePoTFull, CondRePoTNoPrefix, CondRePoTRestart,
	CondVEXFull, CondVEXNoPrefix, CondVEXRestart,
}

// DefaultDerailConditions are the conditions run when none are named: the
// paper's main-text seven (the four prompted ones and the three RePoT
// ones). The step-by-step agent and the three VEX conditions are its
// appendix comparisons and cost many calls per case, so they are asked for
// by name.
var DefaultDerailConditions = []string{CondNoFeedback, CondErrorOnly, CondStateFeedback, CondStateLegal, CondRePoTFull, CondRePoTNoPrefix, CondRePoTRestart}

// PromptedConditions are the one-call conditions answered with a JSON move
// list.
var PromptedConditions = []string{CondNoFeedback, CondErrorOnly, CondStateFeedback, CondStateLegal}

// DerailStatements are the checkpoint statements of repot-full and
// repot-no-prefix: the paper's one sentence (default) or the full statement.
var DerailStatements = []string{StatementPaper, StatementFull}

// ValidCondition reports whether name is a Derail-550 condition.
func ValidCondition(name string) bool { return slices.Contains(DerailConditions, name) }

// Routes of repot-adaptive (and the route names used for the other methods):
// Record.Route.
const (
	RouteInitialSuccess   = "initial_pot_success"
	RouteFreshEmptyPlan   = "fresh_retry_empty_plan"
	RouteFreshShortPrefix = "fresh_retry_short_prefix"
	RouteSuffixRepair     = "suffix_repair"
	RouteFreshRetry       = "fresh_retry"   // pot-retry's second call
	RouteNoExtraCall      = "no_extra_call" // pot's failure, or a method that stopped after one call
)

// Stop reasons of a replay and of a run (Record.StoppedReason).
const (
	StopGoal            = "goal"
	StopInvalidMove     = "invalid_move"
	StopFormatError     = "format_error"
	StopMaxSteps        = "max_steps"
	StopPlanExhausted   = "plan_exhausted"
	StopNoPlan          = "no_plan"
	StopProgramError    = "program_error"
	StopSandboxRejected = "sandbox_rejected"
	StopTruncated       = "truncated"
	StopInfraError      = "infra_error"
	// StopPastGoal: every move is legal and the goal was reached, but moves
	// followed it (a prompted Derail candidate must end at the goal).
	StopPastGoal = "past_goal"
	// StopCallBudget: a run with its own call budget (vex) spent it
	// before reaching the goal.
	StopCallBudget = "call_budget"
	// StopRetryBudget: the step-by-step agent (stateguard-rollback) had
	// more proposals in a row refused than its retry budget allows.
	StopRetryBudget = "retry_budget_exhausted"
	// StopRepetitionLoop: the step-by-step agent entered a non-goal state
	// too often, or kept proposing blocked or looping moves past its retry
	// budget.
	StopRepetitionLoop = "repetition_loop"
)

// KindFormatError is a replay's error kind for a move that failed to
// normalize (ReplayTrace.Kind).
const KindFormatError = "FORMAT_ERROR"

// Call purposes in traces (CallTrace.Purpose).
const (
	PurposeInitial    = "initial"
	PurposeFreshRetry = "fresh_retry"
	PurposeRepair     = "repair"
	// PurposeRecovery is the one call of a prompted Derail condition.
	PurposeRecovery = "recovery"
	// PurposeSample is a CoT call: cot's one call, and each of
	// self-consistency's samples.
	PurposeSample = "sample"
	// PurposeChunk is one VEX chunk proposal.
	PurposeChunk = "chunk"
	// PurposeStep is one action choice of the step-by-step agent
	// (stateguard-rollback).
	PurposeStep = "step"
)

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

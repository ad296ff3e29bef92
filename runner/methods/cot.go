package methods

import (
	"context"
	"errors"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/runner/model"
)

func init() {
	register(contract.MethodCoT, behaviour{own: cot})
}

// cot is chain of thought (the reference's FullSolutionAgent): one plain
// prompt (prompt.Sample) for the whole move list, answered with the moves
// themselves rather than a program, replayed once from the initial state.
// A reply without a readable move list is a recorded failure.
func cot(ctx context.Context, r *run, method string) (contract.Record, contract.Trace, error) {
	s, err := r.cotSample(ctx)
	if err != nil {
		return r.finish(method, contract.RouteNoExtraCall, false, replay.Result{}, replay.Result{}, err)
	}
	route := contract.RouteNoExtraCall
	if s.res.ReachedGoal {
		route = contract.RouteInitialSuccess
	}
	return r.finish(method, route, false, s.res, s.res, nil)
}

// cotAttempt is one CoT call's outcome: its replay from the initial state,
// and the reference's count of the moves it tried (steps).
type cotAttempt struct {
	res replay.Result
	// steps is len(run.steps) of the reference's trace for this attempt:
	// 1 for a reply it could not parse (one failed step is recorded), else
	// the moves it tried to apply, the failing one included.
	steps int
}

// cotSample makes one CoT call (purpose sample) and replays its moves from
// the initial state within the problem's step limit. The error is an
// *infraError or ErrAborted.
func (r *run) cotSample(ctx context.Context) (cotAttempt, error) {
	ct, resp, err := r.complete(ctx, contract.PurposeSample, prompt.Sample(r.p))
	if err != nil {
		return cotAttempt{}, err
	}
	pl := cotPlan(ct, resp)
	r.trace.Calls = append(r.trace.Calls, *ct)
	res := r.replayPlan(pl, r.init, r.maxSteps)
	r.setReplay(len(r.trace.Calls)-1, 0, res)
	return cotAttempt{res: res, steps: referenceSteps(pl, res)}, nil
}

// cotPlan reads the moves of a CoT reply (program.ExtractActions). A reply
// without them fails: truncated when the reply hit the token limit, no plan
// when it was empty, else a format error.
func cotPlan(ct *contract.CallTrace, resp model.Response) plan {
	moves, err := program.ExtractActions(resp.Content)
	if err == nil {
		ct.Plan = moves
		return plan{moves: moves}
	}
	ct.ParseError = err.Error()
	reason, msg := contract.StopFormatError, "The reply's move list could not be read: "+err.Error()
	switch {
	case resp.FinishReason == "length":
		reason, msg = contract.StopTruncated, "The reply was cut off at the token limit before a complete move list; "+err.Error()
	case errors.Is(err, program.ErrEmptyReply):
		reason, msg = contract.StopNoPlan, "The reply was empty."
	}
	ct.Outcome = reason
	return plan{failure: reason, message: msg}
}

// referenceSteps is how many steps the reference's trace of an attempt
// holds (apply_actions): one for an unparseable reply; for a replay that
// stopped at a move that failed to normalize or was invalid, the moves up
// to and including it; else the moves applied (at the goal, at the end of
// the plan, or at the step limit, where the reference cuts the plan).
func referenceSteps(pl plan, res replay.Result) int {
	switch {
	case pl.failure != "":
		return 1
	case res.K >= 0 && res.StopReason != contract.StopMaxSteps:
		return res.K + 1
	default:
		return len(res.Prefix)
	}
}

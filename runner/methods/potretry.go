package methods

import (
	"context"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
)

func init() {
	register(contract.MethodPoTRetry, behaviour{afterFailedPlan: potRetry})
}

// potRetry makes one fresh call after a failed first plan and keeps the
// better attempt.
func potRetry(ctx context.Context, r *run, method string, first replay.Result) (contract.Record, contract.Trace, error) {
	final, err := r.freshRetry(ctx, first)
	return r.finish(method, contract.RouteFreshRetry, false, first, final, err)
}

// freshRetry makes one independent fresh call and keeps the better attempt.
func (r *run) freshRetry(ctx context.Context, first replay.Result) (replay.Result, error) {
	second, err := r.fromInitial(ctx, contract.PurposeFreshRetry, prompt.Fresh(r.p, 2))
	if err != nil {
		return first, err
	}
	if Better(second, first) {
		return second, nil
	}
	return first, nil
}

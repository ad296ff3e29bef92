package methods

import (
	"context"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/replay"
)

func init() {
	register(contract.MethodPoT, behaviour{afterFailedPlan: pot})
}

// pot is one-shot Program-of-Thought: a failed first plan is the result,
// with no extra call.
func pot(_ context.Context, r *run, method string, first replay.Result) (contract.Record, contract.Trace, error) {
	return r.finish(method, contract.RouteNoExtraCall, false, first, first, nil)
}

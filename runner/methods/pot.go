package methods

import (
	"context"

	"repot.dev/repot-operator/contract"
)

// pot is one-shot Program-of-Thought: a failed first plan is the result,
// with no extra call.
func pot(_ context.Context, r *run, first ReplayResult) (contract.Record, contract.Trace, error) {
	return r.finish(contract.MethodPoT, contract.RouteNoExtraCall, false, first, first, nil)
}

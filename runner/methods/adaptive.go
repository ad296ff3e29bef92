package methods

import (
	"context"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
)

func init() {
	register(contract.MethodAdaptive, behaviour{afterFailedPlan: adaptive})
}

// adaptive routes its one extra call by the first plan's verified prefix
// (AdaptiveRoute): a suffix repair from the checkpoint, or a fresh retry.
func adaptive(ctx context.Context, r *run, method string, first replay.Result) (contract.Record, contract.Trace, error) {
	route := AdaptiveRoute(first, r.opts.AdaptiveThresholdPermille)
	if route == contract.RouteSuffixRepair {
		final, err := r.repair(ctx, first, prompt.Standard, 1)
		return r.finish(method, route, true, first, final, err)
	}
	final, err := r.freshRetry(ctx, first)
	return r.finish(method, route, false, first, final, err)
}

// AdaptiveRoute routes repot-adaptive's single extra call after a failed
// first plan: an empty plan gets a fresh retry, a verified prefix fraction
// below the threshold (in thousandths) gets a fresh retry, anything else a
// suffix repair. A first plan that reached the goal is initial_pot_success.
func AdaptiveRoute(first replay.Result, thresholdPermille int) string {
	switch {
	case first.ReachedGoal:
		return contract.RouteInitialSuccess
	case first.PlanLen == 0:
		return contract.RouteFreshEmptyPlan
	case 1000*len(first.Prefix) < thresholdPermille*first.PlanLen:
		return contract.RouteFreshShortPrefix
	default:
		return contract.RouteSuffixRepair
	}
}

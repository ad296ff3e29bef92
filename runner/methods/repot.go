package methods

import (
	"context"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
)

func init() {
	register(contract.MethodRePoT, behaviour{afterFailedPlan: repot})
	register(contract.MethodRePoTNoPrefix, behaviour{afterFailedPlan: repot})
	register(contract.MethodRePoTRestart, behaviour{afterFailedPlan: repot})
	register(contract.MethodVRR, behaviour{afterFailedPlan: repot})
}

// repot resumes a failed first plan from its verified checkpoint with up to
// RepairBudget suffix-repair calls (repot-no-prefix and repot-restart differ
// only in the repair prompt; repot-vrr runs here with the exact verifier
// and no rounds to record). With no repair budget it is pot.
func repot(ctx context.Context, r *run, method string, first replay.Result) (contract.Record, contract.Trace, error) {
	if r.opts.RepairBudget <= 0 {
		// With no repair budget repot is pot: no extra call, so no route.
		return r.finish(method, contract.RouteNoExtraCall, false, first, first, nil)
	}
	final, err := r.repair(ctx, first, repairVariants[method], r.opts.RepairBudget)
	return r.finish(method, contract.RouteSuffixRepair, true, first, final, err)
}

// repairVariants gives the repair prompt of each repot method.
var repairVariants = map[string]prompt.Variant{
	contract.MethodRePoT:         prompt.Standard,
	contract.MethodRePoTNoPrefix: prompt.NoPrefix,
	contract.MethodRePoTRestart:  prompt.Restart,
}

// repair makes up to budget repair calls from the checkpoint of cur, each
// from the last one's checkpoint, until a plan reaches the goal (the exact
// verifier's loop, recording no rounds).
func (r *run) repair(ctx context.Context, cur replay.Result, v prompt.Variant, budget int) (replay.Result, error) {
	for i := 0; i < budget && !cur.ReachedGoal; i++ {
		next, _, err := r.repairOnce(ctx, cur, cur.Error, v)
		if err != nil {
			return cur, err
		}
		cur = next
	}
	return cur, nil
}

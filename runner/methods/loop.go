package methods

import (
	"context"
	"errors"
	"fmt"

	"repot.dev/repot-operator/analysis/vrr"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/contract/replay"
)

// loopKind is how a repair loop decides to make another round.
type loopKind int

const (
	// loopFixed is repot: repair while the verdict rejects, up to R rounds.
	loopFixed loopKind = iota
	// loopStop is repot-vrr's VRR-Stop: repair while the estimated gain of
	// the next round per token is above tau, up to R rounds.
	loopStop
	// loopGuard is VRR-Guard: keep an incumbent, replace it only with a
	// candidate whose accepting votes beat it by the margin.
	loopGuard
)

// loopSpec is one run's repair loop.
type loopSpec struct {
	kind    loopKind
	budget  int
	variant prompt.Variant
	cfg     vrr.Config // normalized
	est     *vrr.Estimates
	// record keeps the rounds in the record.
	record bool
}

// recordsRounds reports whether a run of method under opts records its
// rounds: repot-vrr always, the other methods of the RePoT repair loop
// (contract.MethodSpec.RepairLoop) with a budget above 1 or a noisy or
// repeated verdict.
func recordsRounds(method string, opts Options) bool {
	if method == contract.MethodVRR {
		return true
	}
	spec, _ := contract.LookupMethod(method)
	return spec.RepairLoop && opts.RepairBudget > 0 && (opts.RepairBudget > 1 || opts.VRR.Noise.Active() || opts.VRR.Votes > 1)
}

// loopFor returns the loop of a repot-family method.
func loopFor(method string, opts Options) (loopSpec, error) {
	lp := loopSpec{kind: loopFixed, budget: opts.RepairBudget, variant: prompt.Standard, cfg: opts.VRR.Normalized(), record: recordsRounds(method, opts)}
	if v, ok := repairVariants[method]; ok {
		lp.variant = v
	}
	if method != contract.MethodVRR || opts.VRRCalibrate {
		return lp, nil
	}
	if opts.VRREstimates == nil {
		return lp, errors.New("repot-vrr needs estimates: the engine calibrates them, or Options.VRREstimates holds frozen ones")
	}
	lp.est, lp.kind = opts.VRREstimates, loopStop
	if opts.VRREstimates.Guard {
		lp.kind = loopGuard
	}
	return lp, nil
}

// judge casts the round's votes on a plan: the exact verdict m times, or
// the seeded noisy votes.
func (r *run) judge(lp loopSpec, round int, res replay.Result) int {
	m := lp.cfg.Votes
	if !lp.cfg.Noise.Active() {
		if res.ReachedGoal {
			return m
		}
		return 0
	}
	return vrr.Votes(lp.cfg.Noise, r.p.ProblemID, round, m, res.ReachedGoal)
}

func (r *run) callTokens(idx int) int {
	if idx < 0 || idx >= len(r.trace.Calls) {
		return 0
	}
	u := r.trace.Calls[idx].Usage
	return u.Prompt + u.Completion
}

func (r *run) addRound(lp loopSpec, res replay.Result, accepts, tokens int, kept, noCall bool) {
	if lp.record {
		r.rounds = append(r.rounds, contract.Round{Valid: res.ReachedGoal, Prefix: len(res.Prefix), Accepts: accepts, Tokens: tokens, Kept: kept, NoCall: noCall})
	}
}

// repairLoop runs the repair loop from the first plan (call 0) and
// returns the committed plan. r.repairAttempts counts the repair calls it
// began, r.loopStop says why it stopped.
func (r *run) repairLoop(ctx context.Context, first replay.Result, lp loopSpec) (replay.Result, error) {
	m := lp.cfg.Votes
	cur := first
	acc := r.judge(lp, 0, cur)
	r.addRound(lp, cur, acc, r.callTokens(0), false, false)
	var (
		env        vrr.EnvEstimate
		rho0, rho1 float64
		belief     float64
	)
	if lp.est != nil {
		env = lp.est.For(r.p.Environment)
		rho0, rho1 = lp.est.Rho()
		belief = vrr.Filter(float64(env.InitialValidPermille)/1000, acc, m, rho0, rho1)
	}
	for k := 1; ; k++ {
		accepted := 2*acc > m
		var alpha, beta float64
		switch lp.kind {
		case loopFixed:
			// The exact verifier's acceptance is final; a noisy loop
			// verifies its plan again every round until its budget, as
			// VRR-Stop's fixed-R baseline does.
			if accepted && !lp.cfg.Noise.Active() {
				r.loopStop = contract.LoopAccepted
				return cur, nil
			}
			if k > lp.budget {
				r.loopStop = contract.LoopBudget
				if accepted {
					r.loopStop = contract.LoopAccepted
				}
				return cur, nil
			}
			if accepted {
				acc = r.judge(lp, k, cur)
				r.addRound(lp, cur, acc, 0, false, true)
				continue
			}
		case loopStop:
			if k > lp.budget {
				r.loopStop = contract.LoopBudget
				return cur, nil
			}
			alpha, beta, _ = env.Rates(k)
			if env.Lookahead(belief, k, lp.budget) <= lp.cfg.Tau {
				r.loopStop = contract.LoopGain
				if accepted {
					r.loopStop = contract.LoopAccepted
				}
				return cur, nil
			}
			if accepted {
				// Worth another round, but the verdict accepted: verify
				// again rather than repair an accepted plan.
				acc = r.judge(lp, k, cur)
				r.addRound(lp, cur, acc, 0, false, true)
				belief = vrr.Filter(belief, acc, m, rho0, rho1)
				continue
			}
		case loopGuard:
			if acc == m || k > lp.budget {
				r.loopStop = contract.LoopGuard
				return cur, nil
			}
		}
		base, msg, ok := r.loopCheckpoint(cur, k)
		if !ok {
			r.loopStop = contract.LoopAccepted
			return cur, nil
		}
		r.repairAttempts++
		cand, idx, err := r.repairOnce(ctx, base, msg, lp.variant)
		if err != nil {
			r.loopStop = contract.LoopError
			return cur, err
		}
		candAcc := r.judge(lp, k, cand)
		kept := false
		if lp.kind == loopGuard && candAcc < acc+lp.cfg.GuardMargin {
			kept = true
		} else {
			cur, acc = cand, candAcc
		}
		r.addRound(lp, cur, acc, r.callTokens(idx), kept, false)
		if lp.kind == loopStop {
			belief = vrr.Filter(vrr.Predict(belief, alpha, beta), acc, m, rho0, rho1)
		}
	}
}

// loopCheckpoint is where round k repairs the committed plan from: its
// true first illegal move when it is invalid; when it is valid (only a
// noisy verdict rejects it) a spurious rejection of a drawn move of its
// verified prefix. ok is false for a valid plan with no moves (nothing to
// reject).
func (r *run) loopCheckpoint(cur replay.Result, k int) (replay.Result, string, bool) {
	if !cur.ReachedGoal {
		return cur, cur.Error, true
	}
	if len(cur.Prefix) == 0 {
		return cur, "", false
	}
	pos := vrr.SpuriousPosition(r.p.ProblemID, k, len(cur.Prefix))
	state := r.init
	for _, a := range cur.Prefix[:pos] {
		state = r.env.Step(state, a).Next
	}
	msg := fmt.Sprintf("Move %d (%s) is invalid: the verifier rejected it.", pos+1, replay.Compact(r.env.RawMove(cur.Prefix[pos])))
	return replay.Result{Prefix: cur.Prefix[:pos:pos], State: state, K: pos, Error: msg, StopReason: contract.StopInvalidMove, PlanLen: len(cur.Prefix)}, msg, true
}

// repairOnce makes one repair call from the checkpoint of cur (message
// msg) and returns the plan it commits: the standard and no-prefix variants
// replay the repair plan from the verified state and append it to the
// prefix; the restart variant replays it from the initial state on its own.
func (r *run) repairOnce(ctx context.Context, cur replay.Result, msg string, v prompt.Variant) (replay.Result, int, error) {
	cp, err := prompt.NewCheckpoint(r.env, cur.Prefix, cur.State, msg)
	if err != nil {
		return cur, -1, fmt.Errorf("problem %s: checkpoint: %w", r.p.ProblemID, err)
	}
	pl, idx, err := r.call(ctx, contract.PurposeRepair, prompt.Repair(r.p, cp, v))
	if err != nil {
		return cur, -1, err
	}
	if v == prompt.Restart {
		res := r.replayPlan(pl, r.init, r.maxSteps)
		r.setReplay(idx, 0, res)
		return res, idx, nil
	}
	from := len(cur.Prefix)
	res := r.replayPlan(pl, cur.State, r.maxSteps-from)
	r.setReplay(idx, from, res)
	return replay.Resume(cur, res), idx, nil
}

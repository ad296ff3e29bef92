package methods

import (
	"context"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/model"
)

func init() {
	register(contract.MethodSelfConsistency, behaviour{own: selfConsistency})
}

// DefaultSelfConsistencySamples is self-consistency's k when
// Options.SelfConsistencySamples is not above 0.
const DefaultSelfConsistencySamples = 8

// selfConsistency is the reference's SelfConsistencyAgent: up to k CoT
// samples (cot's call and replay, the same prompt every time), stopping at
// the first that reaches the goal; when none does, the kept attempt is the
// longest one by the reference's measure (cotAttempt.steps: the moves it
// tried, the failing one included; an unparseable reply counts 1, an empty
// move list 0), the earlier one on ties. Calls and tokens are summed over
// all samples; Record.Samples is the number drawn.
//
// At a temperature above 0, sample i's request carries seed i, so the
// samples are independent draws and still reproducible. At temperature 0
// no seed is sent: a greedy server answers identical prompts identically,
// so k samples are k copies of one answer for k times the tokens, which is
// what the reference's k calls at temperature 0 amount to as well.
func selfConsistency(ctx context.Context, r *run, method string) (contract.Record, contract.Trace, error) {
	k := r.opts.SelfConsistencySamples
	if k <= 0 {
		k = DefaultSelfConsistencySamples
	}
	client := r.deps.Client
	defer func() { r.deps.Client = client }()
	var first, best cotAttempt
	samples := 0
	var err error
	for i := range k {
		if r.opts.Temperature > 0 {
			r.deps.Client = seededClient{Client: client, seed: int64(i)}
		}
		var s cotAttempt
		if s, err = r.cotSample(ctx); err != nil {
			break
		}
		samples++
		if i == 0 {
			first, best = s, s
		}
		if s.res.ReachedGoal {
			best = s
			break
		}
		// Strictly longer only: a tie keeps the earlier attempt.
		if s.steps > best.steps {
			best = s
		}
	}
	route := contract.RouteNoExtraCall
	switch {
	case first.res.ReachedGoal:
		route = contract.RouteInitialSuccess
	case samples > 1:
		route = contract.RouteFreshRetry
	}
	rec, tr, ferr := r.finish(method, route, false, first.res, best.res, err)
	if rec.Method != "" {
		rec.Samples = samples
	}
	return rec, tr, ferr
}

// seededClient sends every request with its seed.
type seededClient struct {
	model.Client
	seed int64
}

// Complete sends req with the client's seed.
func (c seededClient) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	seed := c.seed
	req.Seed = &seed
	return c.Client.Complete(ctx, req)
}

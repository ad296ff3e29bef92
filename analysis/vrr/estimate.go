package vrr

import (
	"math"
	"sort"

	"repot.dev/repot-operator/contract"
)

// RoundEstimate is what calibration learnt about round K (K >= 1) of the
// loop: the posterior means of alpha_K and beta_K in thousandths, and the
// tokens a repair call is expected to cost (the median of the
// environment's calibration repair calls, every round together).
type RoundEstimate struct {
	K             int `json:"k"`
	AlphaTrials   int `json:"alphaTrials"`
	AlphaHits     int `json:"alphaHits"`
	AlphaPermille int `json:"alphaPermille"`
	BetaTrials    int `json:"betaTrials"`
	BetaHits      int `json:"betaHits"`
	BetaPermille  int `json:"betaPermille"`
	Tokens        int `json:"tokens"`
}

// EnvEstimate is the estimates of one environment ("" for all pooled).
type EnvEstimate struct {
	Environment string `json:"environment"`
	// Runs counts the calibration runs; InitialValidPermille is the share
	// of them whose first plan was valid (the belief before any vote).
	Runs                 int             `json:"runs"`
	InitialValidPermille int             `json:"initialValidPermille"`
	Rounds               []RoundEstimate `json:"rounds"`
}

// Estimates are the frozen estimates repot-vrr stops by. They hold no
// floats, so they marshal to the same bytes on every machine.
type Estimates struct {
	// Rho0Permille and Rho1Permille are the verifier's false-accept and
	// false-reject rates estimated from the repeated votes (VoteSamples
	// plans of Votes votes each); JPermille = 1000 - rho0 - rho1.
	Rho0Permille int `json:"rho0Permille"`
	Rho1Permille int `json:"rho1Permille"`
	JPermille    int `json:"jPermille"`
	Votes        int `json:"votes"`
	VoteSamples  int `json:"voteSamples"`
	// Guard reports that J is below the configured bound: the runs use
	// VRR-Guard.
	Guard bool `json:"guard,omitempty"`
	// Pooled is every environment together; Environments those with
	// enough data of their own (MinTrials at round 1), sorted.
	Pooled       EnvEstimate   `json:"pooled"`
	Environments []EnvEstimate `json:"environments,omitempty"`
}

// Calibrate computes the estimates from the records of the calibration
// runs (one model; records without rounds or with an infra error are left
// out). alpha and beta come from the true validity the records keep;
// the error rates only from the votes. The result does not depend on the
// order of recs.
func Calibrate(recs []contract.Record, c Config) Estimates {
	c = c.Normalized()
	var use []contract.Record
	for _, r := range recs {
		if len(r.Rounds) > 0 && r.InfraError == "" {
			use = append(use, r)
		}
	}
	sort.Slice(use, func(i, j int) bool { return use[i].Key() < use[j].Key() })
	est := Estimates{Votes: c.Votes}
	var samples []int
	for _, r := range use {
		for _, rd := range r.Rounds {
			samples = append(samples, rd.Accepts)
		}
	}
	est.VoteSamples = len(samples)
	rho0, rho1 := EstimateErrorRates(samples, c.Votes)
	est.Rho0Permille, est.Rho1Permille = permille(rho0), permille(rho1)
	est.JPermille = 1000 - est.Rho0Permille - est.Rho1Permille
	est.Guard = est.JPermille < c.GuardJPermille
	est.Pooled = envEstimate("", use, nil)
	byEnv := map[string][]contract.Record{}
	for _, r := range use {
		byEnv[r.Environment] = append(byEnv[r.Environment], r)
	}
	names := make([]string, 0, len(byEnv))
	for n := range byEnv {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := envEstimate(n, byEnv[n], &est.Pooled)
		if len(e.Rounds) > 0 && e.Rounds[0].AlphaTrials+e.Rounds[0].BetaTrials >= c.MinTrials {
			est.Environments = append(est.Environments, e)
		}
	}
	return est
}

// envEstimate counts the rounds of recs. With pooled nil the posteriors use
// the uniform Beta(1,1) prior; otherwise a Beta prior of PriorStrength
// pseudo-trials centred on the pooled estimate of the same round.
func envEstimate(env string, recs []contract.Record, pooled *EnvEstimate) EnvEstimate {
	e := EnvEstimate{Environment: env, Runs: len(recs)}
	valid0, longest := 0, 0
	var calls []int
	for _, r := range recs {
		if r.Rounds[0].Valid {
			valid0++
		}
		longest = max(longest, len(r.Rounds))
		for _, rd := range r.Rounds[1:] {
			if !rd.NoCall {
				calls = append(calls, rd.Tokens)
			}
		}
	}
	// A repair's cost depends on the problem's prompt, not on the round:
	// every round expects the median tokens of the repair calls (a few
	// long replies do not make a round look expensive).
	sort.Ints(calls)
	median := 0
	if len(calls) > 0 {
		median = calls[len(calls)/2]
	}
	if median == 0 && pooled != nil && len(pooled.Rounds) > 0 {
		median = pooled.Rounds[0].Tokens
	}
	e.InitialValidPermille = int(math.Round(1000 * float64(valid0+1) / float64(len(recs)+2)))
	for k := 1; k < longest; k++ {
		re := RoundEstimate{K: k}
		for _, r := range recs {
			if k >= len(r.Rounds) {
				continue
			}
			prev, cur := r.Rounds[k-1], r.Rounds[k]
			if cur.NoCall {
				continue
			}
			if prev.Valid {
				re.BetaTrials++
				if !cur.Valid {
					re.BetaHits++
				}
			} else {
				re.AlphaTrials++
				if cur.Valid {
					re.AlphaHits++
				}
			}
		}
		re.Tokens = median
		pa, pb, s := 0.5, 0.5, 2.0
		if pooled != nil {
			pr := pooled.round(k)
			pa, pb, s = float64(pr.AlphaPermille)/1000, float64(pr.BetaPermille)/1000, PriorStrength
		}
		re.AlphaPermille = permille((float64(re.AlphaHits) + s*pa) / (float64(re.AlphaTrials) + s))
		re.BetaPermille = permille((float64(re.BetaHits) + s*pb) / (float64(re.BetaTrials) + s))
		e.Rounds = append(e.Rounds, re)
	}
	return e
}

// round is the estimate of round k; beyond the calibrated rounds, the last
// one (a loop that calibrated R rounds and runs more assumes they behave
// like its last). An estimate with no rounds gives the uniform prior.
func (e EnvEstimate) round(k int) RoundEstimate {
	if len(e.Rounds) == 0 {
		return RoundEstimate{K: k, AlphaPermille: 500, BetaPermille: 500}
	}
	if k < 1 {
		k = 1
	}
	if k > len(e.Rounds) {
		return e.Rounds[len(e.Rounds)-1]
	}
	return e.Rounds[k-1]
}

// For returns the estimate of env: its own when it had enough data, else
// the pooled one.
func (est *Estimates) For(env string) EnvEstimate {
	for _, e := range est.Environments {
		if e.Environment == env {
			return e
		}
	}
	return est.Pooled
}

func permille(x float64) int { return int(math.Round(1000 * math.Max(0, math.Min(1, x)))) }

// Likelihoods are the chances of a accepting votes of m for a valid and for
// an invalid plan under error rates rho0 (false accept) and rho1 (false
// reject).
func likelihoods(a, m int, rho0, rho1 float64) (valid, invalid float64) {
	return binom(a, m, 1-rho1), binom(a, m, rho0)
}

func binom(a, m int, p float64) float64 {
	c := 1.0
	for i := 0; i < a; i++ {
		c = c * float64(m-i) / float64(i+1)
	}
	return c * math.Pow(p, float64(a)) * math.Pow(1-p, float64(m-a))
}

// Filter updates the belief that the committed plan is valid with a
// accepting votes of m (Bayes' rule under rho0, rho1). With votes that
// both hypotheses rule out it returns the prior unchanged.
func Filter(prior float64, a, m int, rho0, rho1 float64) float64 {
	lv, li := likelihoods(a, m, rho0, rho1)
	num := prior * lv
	den := num + (1-prior)*li
	if den <= 0 {
		return prior
	}
	return num / den
}

// Predict is VRR-Stop's prediction of the belief after one more repair:
// b- = (1 - beta) b + alpha (1 - b).
func Predict(b, alpha, beta float64) float64 { return (1-beta)*b + alpha*(1-b) }

// Gain is G_k = (1 - b) alpha - b beta, the expected change in validity of
// one more round.
func Gain(b, alpha, beta float64) float64 { return (1-b)*alpha - b*beta }

// GainPer1k is Gain in thousandths of validity per 1000 tokens of a round
// expected to cost tokens (at least 1), rounded toward minus infinity so
// that a gain is never rounded up past tau.
func GainPer1k(g float64, tokens int) int {
	return int(math.Floor(g * 1e6 / float64(max(tokens, 1))))
}

// Rates returns alpha and beta of round k as probabilities.
func (e EnvEstimate) Rates(k int) (alpha, beta float64, tokens int) {
	r := e.round(k)
	return float64(r.AlphaPermille) / 1000, float64(r.BetaPermille) / 1000, r.Tokens
}

// Rho returns the estimated error rates as probabilities.
func (est *Estimates) Rho() (rho0, rho1 float64) {
	return float64(est.Rho0Permille) / 1000, float64(est.Rho1Permille) / 1000
}

// EstimateErrorRates estimates rho0 and rho1 from the accepting-vote
// counts of plans that each got m votes, without knowing which plans were
// valid: the maximum-likelihood fit (EM, a fixed number of iterations from
// a fixed start) of a two-class binomial mixture, the valid class being the
// one that accepts more. Fewer than 3 votes cannot identify the mixture:
// the rates are then 0 (the verdicts are taken as exact).
func EstimateErrorRates(accepts []int, m int) (rho0, rho1 float64) {
	if m < 3 || len(accepts) == 0 {
		return 0, 0
	}
	hist := make([]float64, m+1)
	for _, a := range accepts {
		hist[min(max(a, 0), m)]++
	}
	n := float64(len(accepts))
	pi, r0, r1 := 0.5, 0.1, 0.1
	for it := 0; it < 500; it++ {
		var w, sumAccV, sumAccI, wI float64
		for a, c := range hist {
			if c == 0 {
				continue
			}
			lv, li := likelihoods(a, m, r0, r1)
			den := pi*lv + (1-pi)*li
			if den <= 0 {
				continue
			}
			g := pi * lv / den
			w += c * g
			wI += c * (1 - g)
			sumAccV += c * g * float64(a)
			sumAccI += c * (1 - g) * float64(a)
		}
		pi = w / n
		if w > 0 {
			r1 = 1 - sumAccV/(w*float64(m))
		}
		if wI > 0 {
			r0 = sumAccI / (wI * float64(m))
		}
		pi = math.Min(math.Max(pi, 1e-9), 1-1e-9)
	}
	if r0+r1 > 1 { // the label switch: the "valid" class accepts less
		r0, r1 = 1-r1, 1-r0
	}
	return r0, r1
}

// Lookahead is the stopping statistic of round k (k >= 1) of a loop with
// budget R, from belief b that the committed plan is valid: the best, over
// horizons h = 1..R-k+1, of the expected validity gained by rounds k..k+h-1
// (the belief predicted round by round with b- = (1-beta)b + alpha(1-b))
// per 1000 tokens they are expected to cost, in thousandths (GainPer1k).
// With h = 1 it is VRR-Stop's G_k per token; the longer horizons let a
// round with little immediate gain through when later rounds are expected
// to pay (a failed suffix repair still lengthens the verified prefix, so
// alpha_k need not fall with k).
func (e EnvEstimate) Lookahead(b float64, k, budget int) int {
	best := math.MinInt
	cur, tokens := b, 0
	for j := k; j <= budget; j++ {
		alpha, beta, tok := e.Rates(j)
		cur = Predict(cur, alpha, beta)
		tokens += max(tok, 1)
		best = max(best, GainPer1k(cur-b, tokens))
	}
	return best
}

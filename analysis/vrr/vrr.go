// Package vrr is the arithmetic of repot-vrr, RePoT's repair loop that stops
// by expected gain (after VRR-Stop), and of the noisy-verifier ablation:
// seeded verifier votes, the estimates of alpha, beta and the verifier's
// error rates from finished runs, the belief filter and the gain of one more
// round. It is pure: no I/O, no clock, no model; the same inputs always give
// the same outputs. docs/vrr.md defines every quantity.
package vrr

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// Defaults of Config.
const (
	// DefaultTau is the stopping threshold: the rounds ahead must be
	// expected to make more than 100 runs in 1000 valid (10 points) per
	// 1000 tokens they cost.
	DefaultTau = 100
	// DefaultCalibrationProblems is the size of the calibration slice.
	DefaultCalibrationProblems = 32
	// DefaultMinTrials is how many calibration trials an environment needs
	// at a round before its own estimate is used rather than the pooled one.
	DefaultMinTrials = 2
	// DefaultGuardJPermille is the bound on the estimated discrimination J
	// (in thousandths) below which VRR-Guard replaces VRR-Stop.
	DefaultGuardJPermille = 300
	// DefaultGuardMargin is VRR-Guard's margin delta, in votes.
	DefaultGuardMargin = 1
	// PriorStrength is how many pseudo-trials the pooled estimate weighs in
	// an environment's estimate (partial pooling).
	PriorStrength = 4
)

// Noise is the noisy-verifier ablation: the chance, in thousandths, that
// one vote accepts an invalid plan (rho0) or rejects a valid one (rho1).
type Noise struct {
	FalseAcceptPermille int `json:"falseAcceptPermille,omitempty"`
	FalseRejectPermille int `json:"falseRejectPermille,omitempty"`
}

// Active reports whether any vote can be wrong.
func (n Noise) Active() bool { return n.FalseAcceptPermille > 0 || n.FalseRejectPermille > 0 }

// Config is repot-vrr's settings and the noisy-verifier ablation. Every
// field is an integer; zero values take the defaults (Normalized).
type Config struct {
	// Tau is the stopping threshold in thousandths of validity gained per
	// 1000 tokens (per-mille per 1k tokens): the loop stops when the
	// expected gain of the rounds ahead per 1000 tokens they cost
	// (EnvEstimate.Lookahead) is at most Tau.
	Tau int `json:"tau,omitempty"`
	// Votes is m, the verifier votes cast on each committed plan (default
	// 1). The error rates are estimated from these repeats, which needs
	// m >= 3.
	Votes int `json:"votes,omitempty"`
	// Noise perturbs each vote (default none: the exact verifier).
	Noise Noise `json:"verifierNoise,omitempty"`
	// CalibrationProblems is the slice, the first problems of the shard in
	// suite order, on which repot-vrr runs the whole budget to calibrate.
	CalibrationProblems int `json:"calibrationProblems,omitempty"`
	// MinTrials is the per-environment data threshold (DefaultMinTrials).
	MinTrials int `json:"minTrials,omitempty"`
	// GuardJPermille is the J bound below which VRR-Guard runs; -1 never,
	// 1001 always.
	GuardJPermille int `json:"guardJPermille,omitempty"`
	// GuardMargin is VRR-Guard's delta in votes (default 1).
	GuardMargin int `json:"guardMargin,omitempty"`
}

// Normalized returns c with defaults filled in.
func (c Config) Normalized() Config {
	if c.Tau == 0 {
		c.Tau = DefaultTau
	}
	if c.Votes == 0 {
		c.Votes = 1
	}
	if c.CalibrationProblems == 0 {
		c.CalibrationProblems = DefaultCalibrationProblems
	}
	if c.MinTrials == 0 {
		c.MinTrials = DefaultMinTrials
	}
	if c.GuardJPermille == 0 {
		c.GuardJPermille = DefaultGuardJPermille
	}
	if c.GuardMargin == 0 {
		c.GuardMargin = DefaultGuardMargin
	}
	return c
}

// Validate reports a setting out of range.
func (c Config) Validate() error {
	var errs []error
	if c.Tau < 0 {
		errs = append(errs, fmt.Errorf("vrr: tau %d is negative", c.Tau))
	}
	if c.Votes < 0 || c.Votes > 99 {
		errs = append(errs, fmt.Errorf("vrr: votes %d out of range 1..99", c.Votes))
	}
	for name, v := range map[string]int{"falseAcceptPermille": c.Noise.FalseAcceptPermille, "falseRejectPermille": c.Noise.FalseRejectPermille} {
		if v < 0 || v > 1000 {
			errs = append(errs, fmt.Errorf("vrr: verifierNoise.%s %d out of range 0..1000", name, v))
		}
	}
	if c.CalibrationProblems < 0 || c.MinTrials < 0 || c.GuardMargin < 0 {
		errs = append(errs, errors.New("vrr: calibrationProblems, minTrials and guardMargin must not be negative"))
	}
	if c.GuardJPermille < -1 || c.GuardJPermille > 1001 {
		errs = append(errs, fmt.Errorf("vrr: guardJPermille %d out of range -1..1001", c.GuardJPermille))
	}
	return errors.Join(errs...)
}

// draw is a uniform number in [0,1) from the labelled hash of the problem
// id and round: the noisy verifier's seeded randomness. It depends on
// nothing else (not on time, order or concurrency), so every method sees
// the same draws for the same problem and round (common random numbers).
func draw(problemID string, round int, label string) float64 {
	h := sha256.Sum256([]byte("repot-vrr/noise/v1\x00" + problemID + "\x00" + strconv.Itoa(round) + "\x00" + label))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
}

// Votes casts m votes on a plan whose truth is valid, in round k of the
// problem's loop, and returns how many accepted it. With no noise every
// vote tells the truth.
func Votes(n Noise, problemID string, round, m int, valid bool) int {
	m = max(m, 1)
	acc := 0
	for j := 0; j < m; j++ {
		u := draw(problemID, round, "vote/"+strconv.Itoa(j))
		if valid && u >= float64(n.FalseRejectPermille)/1000 {
			acc++
		}
		if !valid && u < float64(n.FalseAcceptPermille)/1000 {
			acc++
		}
	}
	return acc
}

// SpuriousPosition is where a rejection of a valid plan of n moves claims
// its first illegal move, in [0, n): drawn from the problem and round.
func SpuriousPosition(problemID string, round, n int) int {
	if n <= 0 {
		return 0
	}
	return min(int(draw(problemID, round, "position")*float64(n)), n-1)
}

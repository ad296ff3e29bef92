// Package simserver is the project's SIMULATED model server: an
// OpenAI-compatible HTTP server that stands in for a language model where no
// GPU exists (the local cluster, CI, laptops). It is named as a simulation
// everywhere it appears: model ids "sim-<profile>", models owned by
// "repot-simulation", log lines prefixed "repot simulation".
//
// It reads the problem from the prompt (prompt.Parse), computes a valid plan
// with envs.Solve, and answers with a real Python program that prints
// `moves = [...]`. Its mistakes follow a seeded capability Profile, repairs
// included: their success falls on the problems that keep failing
// (RepairPersistence), and a repair answering a spurious rejection of a
// valid plan can break it (RepairBreak, VRR-Stop's beta; docs/vrr.md). Every
// outcome is a function of (seed, prompt) only, so runs are reproducible at
// any concurrency; fault injection (500, 429, resets, hangs) also depends on
// how many times the server has seen that prompt, so retries can succeed.
package simserver

import (
	"fmt"
	"sort"
	"strings"
)

// Curve is a success probability that falls linearly with difficulty d in
// [0,1]: Easy at the environment's smallest complexity, Hard at its largest.
type Curve struct {
	Easy, Hard float64
}

// At is the probability at difficulty d.
func (c Curve) At(d float64) float64 { return clamp01(c.Easy + (c.Hard-c.Easy)*clamp01(d)) }

// FailureMix weighs the ways a failed answer fails. The weights need not sum
// to one.
type FailureMix struct {
	// Empty is an empty reply.
	Empty float64
	// Prose is a reply with no program and no `moves =` line (unparseable).
	Prose float64
	// Crash is a program that raises before printing.
	Crash float64
	// WrongMove is a plan with an illegal move at a drawn depth.
	WrongMove float64
	// ShortPlan is a plan whose moves are all legal but that stops before
	// the goal.
	ShortPlan float64
	// Truncated is a reply cut at max_tokens (finish_reason "length").
	Truncated float64
}

// Profile is a simulated model's capability.
type Profile struct {
	Name        string
	Description string
	// Solve is the chance that a fresh attempt is correct, per environment.
	Solve map[string]Curve
	// Correlation is the chance that a fresh attempt reuses the problem's
	// shared draw instead of its own (0: attempts independent; 1: a retry
	// always repeats the first outcome).
	Correlation float64
	// Failures weighs failure modes of fresh attempts.
	Failures FailureMix
	// DepthShape skews the depth of a wrong move: the verified fraction is
	// u^DepthShape for a uniform u (above 1: mostly early mistakes).
	DepthShape float64
	// RepairBase and RepairGain give a repair's success chance from the
	// verified fraction f of the plan (verified / (verified + remaining)):
	// RepairBase + RepairGain*f, times the Solve curve's ratio at the
	// remaining difficulty over the easiest (harder problems repair worse).
	RepairBase, RepairGain float64
	// RepairFailures weighs failure modes of repairs.
	RepairFailures FailureMix
	// RepairPersistence is the chance that a repair reuses the problem's
	// shared repair draw instead of its own: a problem whose first repair
	// failed tends to fail its next ones, so the repair success alpha_k of
	// VRR-Stop falls from round to round (0: rounds independent).
	RepairPersistence float64
	// RepairBreak is VRR-Stop's beta, the repair breakage: the chance that
	// a repair answering a spurious rejection (the move the message names
	// is legal at the checkpoint: a noisy verifier rejected a valid plan)
	// fails like a repair does, instead of carrying the correct plan on.
	RepairBreak float64
}

// Profiles are the named capability profiles, weak to strong.
var Profiles = map[string]*Profile{
	"weak": {
		Name:        "weak",
		Description: "a weak open model: about 15% adaptive success on open-source-120, failures mostly empty or crashing",
		Solve: map[string]Curve{
			"tower_of_hanoi":   {0.35, 0.00},
			"checker_jumping":  {0.22, 0.00},
			"river_crossing":   {0.08, 0.00},
			"blocksworld":      {0.15, 0.00},
			"blocksworld_pddl": {0.18, 0.00},
		},
		Correlation:       0.85,
		Failures:          FailureMix{Empty: 4, Prose: 2, Crash: 3, WrongMove: 2, ShortPlan: 0.2, Truncated: 0.1},
		DepthShape:        3,
		RepairBase:        0.02,
		RepairGain:        0.3,
		RepairFailures:    FailureMix{Empty: 2, Prose: 1, Crash: 2, WrongMove: 4, ShortPlan: 0.5, Truncated: 0.1},
		RepairPersistence: 0.8,
		RepairBreak:       0.55,
	},
	"medium": {
		Name:        "medium",
		Description: "a mid-size open model: about 45% adaptive success on open-source-120",
		Solve: map[string]Curve{
			"tower_of_hanoi":   {0.80, 0.15},
			"checker_jumping":  {0.60, 0.05},
			"river_crossing":   {0.30, 0.00},
			"blocksworld":      {0.50, 0.02},
			"blocksworld_pddl": {0.55, 0.05},
		},
		Correlation:       0.7,
		Failures:          FailureMix{Empty: 3, Prose: 1, Crash: 2, WrongMove: 2, ShortPlan: 0.3, Truncated: 0.08},
		DepthShape:        3,
		RepairBase:        0.05,
		RepairGain:        0.5,
		RepairFailures:    FailureMix{Empty: 1, Prose: 0.5, Crash: 1, WrongMove: 4, ShortPlan: 0.5, Truncated: 0.08},
		RepairPersistence: 0.7,
		RepairBreak:       0.45,
	},
	"strong": {
		Name:        "strong",
		Description: "a strong open model: about 60-65% adaptive success on open-source-120, suffix repair rarely routed",
		Solve: map[string]Curve{
			"tower_of_hanoi":   {0.95, 0.40},
			"checker_jumping":  {0.82, 0.15},
			"river_crossing":   {0.50, 0.02},
			"blocksworld":      {0.75, 0.08},
			"blocksworld_pddl": {0.75, 0.12},
		},
		Correlation:       0.6,
		Failures:          FailureMix{Empty: 3, Prose: 0.5, Crash: 2, WrongMove: 1.5, ShortPlan: 0.2, Truncated: 0.05},
		DepthShape:        4,
		RepairBase:        0.10,
		RepairGain:        0.65,
		RepairFailures:    FailureMix{Empty: 0.5, Prose: 0.3, Crash: 1, WrongMove: 4, ShortPlan: 0.5, Truncated: 0.05},
		RepairPersistence: 0.6,
		RepairBreak:       0.4,
	},
	"frontier": {
		Name:        "frontier",
		Description: "a closed frontier model: most problems solved first time, long verified prefixes when wrong",
		Solve: map[string]Curve{
			"tower_of_hanoi":   {0.99, 0.90},
			"checker_jumping":  {0.99, 0.70},
			"river_crossing":   {0.90, 0.45},
			"blocksworld":      {0.98, 0.55},
			"blocksworld_pddl": {0.97, 0.60},
		},
		Correlation:       0.9,
		Failures:          FailureMix{Empty: 0.3, Prose: 0.2, Crash: 0.5, WrongMove: 5, ShortPlan: 1, Truncated: 0.05},
		DepthShape:        0.7,
		RepairBase:        0.2,
		RepairGain:        0.6,
		RepairFailures:    FailureMix{Empty: 0.2, Prose: 0.1, Crash: 0.5, WrongMove: 4, ShortPlan: 0.5, Truncated: 0.03},
		RepairPersistence: 0.5,
		RepairBreak:       0.25,
	},
}

// ProfileNames lists the profiles, sorted.
func ProfileNames() []string {
	out := make([]string, 0, len(Profiles))
	for n := range Profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LookupProfile returns the named profile.
func LookupProfile(name string) (*Profile, error) {
	if p, ok := Profiles[name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown simulation profile %q (have %s)", name, strings.Join(ProfileNames(), ", "))
}

// solveCurve is the profile's curve for env, or a middling default.
func (p *Profile) solveCurve(env string) Curve {
	if c, ok := p.Solve[env]; ok {
		return c
	}
	return Curve{0.5, 0.1}
}

func clamp01(x float64) float64 {
	if x < 0 {
		return 0
	}
	if x > 1 {
		return 1
	}
	return x
}

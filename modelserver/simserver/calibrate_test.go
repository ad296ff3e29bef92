package simserver

import (
	"testing"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// outcome is a simplified replay of a decision: the valid prefix, the plan
// length and the checkpoint after the prefix. Empty, prose, crashing and
// truncated answers yield an empty plan, as the runner sees them.
type outcome struct {
	solved   bool
	planLen  int
	prefix   []envs.Action
	state    envs.State
	message  string
	fraction float64
}

func replayDecision(t testing.TB, d Decision, prefix []envs.Action) outcome {
	t.Helper()
	o := outcome{prefix: append([]envs.Action{}, prefix...), state: d.Start}
	goal, err := d.Env.DecodeState(d.Problem.GoalState)
	if err != nil {
		t.Fatal(err)
	}
	switch d.Mode {
	case ModeCorrect, ModeWrongMove, ModeShortPlan:
	default:
		o.message = "no plan"
		return o
	}
	o.planLen = len(d.Moves)
	valid := 0
	for _, raw := range d.Moves {
		if d.Env.IsGoal(o.state, goal) {
			break
		}
		a, err := d.Env.Normalize(d.Problem, o.state, raw)
		if err != nil {
			o.message = err.Error()
			break
		}
		st := d.Env.Step(o.state, a)
		if !st.Valid {
			o.message = st.Message
			break
		}
		o.state, o.prefix = st.Next, append(o.prefix, a)
		valid++
	}
	o.solved = d.Env.IsGoal(o.state, goal)
	if o.planLen > 0 {
		o.fraction = float64(valid) / float64(o.planLen)
	}
	if !o.solved && o.message == "" {
		o.message = "the plan ended before the goal"
	}
	return o
}

type tally struct{ pot, retry, repot, adaptive, calls, n, repairs int }

// simulateMethods runs pot, pot-retry, repot and repot-adaptive through
// Decide directly (no HTTP, no Python).
func simulateMethods(t testing.TB, prof *Profile, seed int64, problems []envs.Problem) tally {
	var tl tally
	sys := func(m []contract.Message) []contract.Message {
		m[0].Content = contract.NoThinkPrefix + "\n" + m[0].Content
		return m
	}
	for i := range problems {
		p := &problems[i]
		d1 := Decide(prof, seed, sys(prompt.Initial(p)))
		if d1.Env == nil {
			t.Fatalf("%s: prompt not understood", p.ProblemID)
		}
		o1 := replayDecision(t, d1, nil)
		tl.n++
		retry := func() bool {
			return replayDecision(t, Decide(prof, seed, sys(prompt.Fresh(p, 2))), nil).solved
		}
		repair := func() bool {
			c, err := prompt.NewCheckpoint(d1.Env, o1.prefix, o1.state, o1.message)
			if err != nil {
				t.Fatal(err)
			}
			d2 := Decide(prof, seed, sys(prompt.Repair(p, c, prompt.Standard)))
			return replayDecision(t, d2, o1.prefix).solved
		}
		if o1.solved {
			tl.pot++
			tl.retry++
			tl.repot++
			tl.adaptive++
			tl.calls++
			continue
		}
		tl.calls += 2
		r, rp := retry(), repair()
		if r {
			tl.retry++
		}
		if rp {
			tl.repot++
		}
		if o1.planLen == 0 || o1.fraction < 0.15 {
			if r {
				tl.adaptive++
			}
		} else {
			tl.repairs++
			if rp {
				tl.adaptive++
			}
		}
	}
	return tl
}

func TestProfilesOrderedOnOpenSource120(t *testing.T) {
	problems, err := envs.Suite("open-source-120")
	if err != nil {
		t.Skipf("suite not available: %v", err)
	}
	var prev *tally
	for _, name := range []string{"weak", "medium", "strong", "frontier"} {
		tl := simulateMethods(t, Profiles[name], 1, problems)
		t.Logf("%-8s pot %3d  pot-retry %3d  repot %3d  adaptive %3d (suffix repairs %d) of %d; calls %.2f/problem",
			name, tl.pot, tl.retry, tl.repot, tl.adaptive, tl.repairs, tl.n, float64(tl.calls)/float64(tl.n))
		if prev != nil && tl.adaptive <= prev.adaptive {
			t.Errorf("%s adaptive %d is not above the weaker profile's %d", name, tl.adaptive, prev.adaptive)
		}
		if tl.retry < tl.pot || tl.repot < tl.pot || tl.adaptive < tl.pot {
			t.Errorf("%s: a method with an extra call solved fewer than pot: %+v", name, tl)
		}
		prev = &tl
	}
}

func BenchmarkCalibration(b *testing.B) {
	problems, err := envs.Suite("open-source-120")
	if err != nil {
		b.Skip(err)
	}
	for _, name := range ProfileNames() {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				tl := simulateMethods(b, Profiles[name], int64(i), problems)
				b.ReportMetric(float64(tl.adaptive)/float64(tl.n)*100, "adaptive%")
			}
		})
	}
}

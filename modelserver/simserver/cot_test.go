package simserver

import (
	"testing"

	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// TestDecideCoTOnlyAnswersSamplePrompts: the CoT decider claims the
// chain-of-thought prompt and leaves PoT and repair prompts to the others.
func TestDecideCoTOnlyAnswersSamplePrompts(t *testing.T) {
	ps := suite(t)
	p := &ps[0]
	if _, _, ok := decideCoT(Profiles["strong"], 1, Call{Messages: prompt.Initial(p)}); ok {
		t.Error("decideCoT answered a PoT prompt")
	}
	if _, _, ok := decideCoT(Profiles["strong"], 1, Call{Messages: prompt.Sample(p)}); !ok {
		t.Error("decideCoT did not answer a CoT prompt")
	}
}

// TestCoTRepliesParseAsTheirModeSays: the runner's parser reads the moves
// of every correct, wrong-move and short answer back exactly, and those
// replay as their mode says; prose and truncated answers give no list.
func TestCoTRepliesParseAsTheirModeSays(t *testing.T) {
	ps := suite(t)
	seen := map[Mode]int{}
	for seed := int64(0); seed < 3; seed++ {
		for i := range ps {
			for _, prof := range []string{"weak", "frontier"} {
				c := Call{Messages: prompt.Sample(&ps[i])}
				d, reply, ok := decideCoT(Profiles[prof], seed, c)
				if !ok {
					t.Fatal("CoT prompt not answered")
				}
				seen[d.Mode]++
				moves, err := program.ExtractActions(reply.Content)
				switch d.Mode {
				case ModeCorrect, ModeWrongMove, ModeShortPlan:
					if err != nil || jsonList(moves) != jsonList(d.Moves) || reply.FinishReason != "stop" {
						t.Fatalf("%s %s: parsed %s, %v (finish %s); want %s", ps[i].ProblemID, d.Mode, jsonList(moves), err, reply.FinishReason, jsonList(d.Moves))
					}
				case ModeProse, ModeTruncated:
					if err == nil {
						t.Errorf("%s %s: the reply parsed to %s", ps[i].ProblemID, d.Mode, jsonList(moves))
					}
					if (d.Mode == ModeTruncated) != (reply.FinishReason == "length") {
						t.Errorf("%s %s: finish reason %s", ps[i].ProblemID, d.Mode, reply.FinishReason)
					}
				default:
					t.Errorf("%s: mode %s for a suite problem", ps[i].ProblemID, d.Mode)
				}
				o := replayDecision(t, d, nil)
				switch {
				case d.Mode == ModeCorrect && !o.solved:
					t.Errorf("%s: correct plan does not solve: %s", ps[i].ProblemID, o.message)
				case d.Mode == ModeWrongMove && (o.solved || len(o.prefix) != d.Depth):
					t.Errorf("%s: wrong move at %d, replay verified %d (solved %v)", ps[i].ProblemID, d.Depth, len(o.prefix), o.solved)
				case d.Mode == ModeShortPlan && (o.solved || len(o.prefix) != len(d.Moves)):
					t.Errorf("%s: short plan of %d verified %d (solved %v)", ps[i].ProblemID, len(d.Moves), len(o.prefix), o.solved)
				}
			}
		}
	}
	for _, m := range append([]Mode{ModeCorrect}, cotFailures...) {
		if seen[m] == 0 {
			t.Errorf("mode %s never drawn", m)
		}
	}
}

// TestCoTWeakerThanPoTOnLongHanoi: on Tower of Hanoi problems with long
// plans (7 disks and more: 127+ moves) the simulated model's CoT success
// rate is well below its PoT first-call success rate.
func TestCoTWeakerThanPoTOnLongHanoi(t *testing.T) {
	var long []envs.Problem
	for _, p := range suite(t) {
		if p.Environment == "tower_of_hanoi" && p.Complexity >= 7 {
			long = append(long, p)
		}
	}
	if len(long) == 0 {
		t.Skip("the suite has no Hanoi problem with 7 disks or more")
	}
	for _, prof := range []string{"medium", "strong", "frontier"} {
		pot, cot, n := 0, 0, 0
		for seed := int64(0); seed < 40; seed++ {
			for i := range long {
				n++
				if Decide(Profiles[prof], seed, prompt.Initial(&long[i])).Mode == ModeCorrect {
					pot++
				}
				if d, _ := drawCoT(Profiles[prof], seed, Call{Messages: prompt.Sample(&long[i])}); d.Mode == ModeCorrect {
					cot++
				}
			}
		}
		potRate, cotRate := float64(pot)/float64(n), float64(cot)/float64(n)
		t.Logf("%s: %d long Hanoi draws, PoT %.3f, CoT %.3f", prof, n, potRate, cotRate)
		if !(cotRate < 0.6*potRate && cotRate < potRate-0.05) {
			t.Errorf("%s: CoT success %.3f is not well below PoT's %.3f on long Hanoi problems", prof, cotRate, potRate)
		}
	}
}

// TestCoTSampleSeeds: at a temperature above 0, samples with different
// seeds are independent draws (not all alike) and each is reproducible; at
// temperature 0, or without a seed, identical prompts get identical
// answers whatever the seed.
func TestCoTSampleSeeds(t *testing.T) {
	ps := suite(t)
	p := Profiles["medium"]
	answer := func(c Call) string {
		_, r, ok := decideCoT(p, 3, c)
		if !ok {
			t.Fatal("CoT prompt not answered")
		}
		return r.FinishReason + "\x00" + r.Content
	}
	seedOf := func(i int64) *int64 { return &i }
	for i := range ps {
		msgs := prompt.Sample(&ps[i])
		base := answer(Call{Messages: msgs})
		sampled := map[string]bool{}
		for s := int64(0); s < 8; s++ {
			if got := answer(Call{Messages: msgs, Temperature: 0, Seed: seedOf(s)}); got != base {
				t.Fatalf("%s: temperature 0 with seed %d answered differently", ps[i].ProblemID, s)
			}
			if got := answer(Call{Messages: msgs, Temperature: 0.7}); got != base {
				t.Fatalf("%s: temperature 0.7 without a seed answered differently", ps[i].ProblemID)
			}
			a := answer(Call{Messages: msgs, Temperature: 0.7, Seed: seedOf(s)})
			if again := answer(Call{Messages: msgs, Temperature: 0.7, Seed: seedOf(s)}); again != a {
				t.Fatalf("%s: seed %d is not reproducible", ps[i].ProblemID, s)
			}
			sampled[a] = true
		}
		if len(sampled) > 1 {
			return // independent draws seen
		}
	}
	t.Error("samples with different seeds were alike on every problem")
}

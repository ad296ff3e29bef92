package simserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// TestDecisionsReplayAsTheirModeSays checks every mode against the verifier:
// correct plans reach the goal, wrong moves are rejected exactly at Depth,
// short plans stop before the goal with every move legal.
func TestDecisionsReplayAsTheirModeSays(t *testing.T) {
	ps := suite(t)
	seen := map[Mode]int{}
	for seed := int64(0); seed < 3; seed++ {
		for i := range ps {
			for _, prof := range []string{"weak", "frontier"} {
				d := Decide(Profiles[prof], seed, prompt.Initial(&ps[i]))
				seen[d.Mode]++
				o := replayDecision(t, d, nil)
				switch d.Mode {
				case ModeCorrect:
					if !o.solved {
						t.Errorf("%s seed %d: correct plan does not solve: %s", ps[i].ProblemID, seed, o.message)
					}
				case ModeWrongMove:
					if o.solved || len(o.prefix) != d.Depth || o.planLen != len(d.Moves) {
						t.Errorf("%s: wrong move at %d, replay verified %d of %d (solved %v)", ps[i].ProblemID, d.Depth, len(o.prefix), o.planLen, o.solved)
					}
				case ModeShortPlan:
					if o.solved || len(o.prefix) != len(d.Moves) || len(d.Moves) == 0 {
						t.Errorf("%s: short plan of %d verified %d (solved %v)", ps[i].ProblemID, len(d.Moves), len(o.prefix), o.solved)
					}
				case ModeChat, ModeNoPlan:
					t.Errorf("%s: mode %s for a suite problem", ps[i].ProblemID, d.Mode)
				}
			}
		}
	}
	for _, m := range append([]Mode{ModeCorrect}, failureModes...) {
		if seen[m] == 0 {
			t.Errorf("mode %s never drawn over %d decisions", m, 6*len(ps))
		}
	}
}

// TestRepairStartsFromCheckpoint checks that repair answers apply from the
// verified state (standard) or the initial state (restart).
func TestRepairStartsFromCheckpoint(t *testing.T) {
	ps := suite(t)
	p := &ps[0]
	e, _ := envs.Lookup(p.Environment)
	s, _ := e.DecodeState(p.InitialState)
	goal, _ := e.DecodeState(p.GoalState)
	plan, err := envs.Solve(e, s, goal)
	if err != nil || len(plan) < 3 {
		t.Fatalf("plan: %v (%d moves)", err, len(plan))
	}
	mid := s
	for _, a := range plan[:2] {
		mid = e.Step(mid, a).Next
	}
	c, err := prompt.NewCheckpoint(e, plan[:2], mid, "Cannot place a larger disk on a smaller disk.")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []prompt.Variant{prompt.Standard, prompt.NoPrefix, prompt.Restart} {
		for seed := int64(0); seed < 20; seed++ {
			d := Decide(Profiles["frontier"], seed, prompt.Repair(p, c, v))
			if d.Repair == nil || d.Repair.Variant != v {
				t.Fatalf("%s: repair not recognised: %+v", v, d.Repair)
			}
			if d.Mode != ModeCorrect {
				continue
			}
			from := plan[:2]
			if v == prompt.Restart {
				from = nil
			}
			if o := replayDecision(t, d, from); !o.solved {
				t.Errorf("%s seed %d: correct repair does not solve from its start", v, seed)
			}
		}
	}
}

// TestProgramsRunInPython runs rendered programs with python3 (these are
// the simulation's own programs, not model output) and checks what they
// print.
func TestProgramsRunInPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	ps := suite(t)
	want := map[Mode]bool{ModeCorrect: true, ModeWrongMove: true, ModeCrash: true, ModeTruncated: true}
	done := map[Mode]bool{}
	for seed := int64(0); seed < 50 && len(done) < len(want); seed++ {
		for i := range ps {
			d := Decide(Profiles["medium"], seed, prompt.Initial(&ps[i]))
			if !want[d.Mode] || done[d.Mode] {
				continue
			}
			done[d.Mode] = true
			r := Render(d, 2000, false)
			code := extract(r.Content)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			cmd := exec.CommandContext(ctx, py, "-I", "-c", code)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			runErr := cmd.Run()
			cancel()
			switch d.Mode {
			case ModeCorrect, ModeWrongMove:
				line := strings.TrimSpace(out.String())
				if runErr != nil || !strings.HasPrefix(line, "moves = ") {
					t.Fatalf("%s program failed (%v): %s %s", d.Mode, runErr, line, errb.String())
				}
				var got []json.RawMessage
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "moves = ")), &got); err != nil {
					t.Fatalf("printed moves are not JSON: %v", err)
				}
				if len(got) != len(d.Moves) {
					t.Fatalf("%s: printed %d moves, want %d", d.Mode, len(got), len(d.Moves))
				}
				for k := range got {
					if !jsonEqual(got[k], d.Moves[k]) {
						t.Fatalf("%s: move %d printed %s, want %s", d.Mode, k, got[k], d.Moves[k])
					}
				}
			case ModeCrash:
				if runErr == nil || strings.Contains(out.String(), "moves =") || !strings.Contains(errb.String(), "KeyError") {
					t.Errorf("crash program: err %v, stdout %q, stderr %q", runErr, out.String(), errb.String())
				}
			case ModeTruncated:
				if r.FinishReason != "length" || Tokens(r.Content) != 2000 || runErr == nil {
					t.Errorf("truncated: finish %s tokens %d run err %v", r.FinishReason, Tokens(r.Content), runErr)
				}
			}
		}
	}
	if len(done) != len(want) {
		t.Errorf("modes exercised %v, want %v", done, want)
	}
}

// extract takes the fenced python block, else the whole text.
func extract(s string) string {
	i := strings.Index(s, "```python\n")
	if i < 0 {
		return s
	}
	rest := s[i+len("```python\n"):]
	if j := strings.Index(rest, "```"); j >= 0 {
		return rest[:j]
	}
	return rest
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func TestEmptyProseAndChatReplies(t *testing.T) {
	d := Decision{Mode: ModeChat}
	if r := Render(d, 0, true); !strings.Contains(r.Content, "simulation") || r.Reasoning != "" {
		t.Errorf("chat reply %+v", r)
	}
	ps := suite(t)
	for seed := int64(0); seed < 200; seed++ {
		d := Decide(Profiles["weak"], seed, prompt.Initial(&ps[5]))
		switch d.Mode {
		case ModeEmpty:
			if r := Render(d, 0, false); r.Content != "" {
				t.Errorf("empty reply %q", r.Content)
			}
		case ModeProse:
			if r := Render(d, 0, false); strings.Contains(r.Content, "moves =") || strings.Contains(r.Content, "```") {
				t.Errorf("prose reply has a plan: %q", r.Content)
			}
		}
	}
	if d := Decide(Profiles["weak"], 1, []contract.Message{{Role: contract.RoleUser, Content: "Environment: no_such_env\n"}}); d.Mode != ModeChat {
		t.Errorf("unknown environment gave %s", d.Mode)
	}
}

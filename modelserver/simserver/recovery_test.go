package simserver

import (
	"encoding/json"
	"strings"
	"testing"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/prompt"
	"repot.dev/repot-operator/envs"
)

// recoveryPrompts builds the four prompted conditions' prompts for a case
// of p derailed after k oracle moves by a legal wrong move.
func recoveryPrompts(t *testing.T, p *envs.Problem, k int) (map[string][]contract.Message, envs.State, bool) {
	t.Helper()
	e, _ := p.Env()
	s, _ := p.Initial()
	goal, _ := p.Goal()
	plan, err := envs.Solve(e, s, goal)
	if err != nil || len(plan) <= k+1 {
		return nil, nil, false
	}
	var trace []json.RawMessage
	for _, a := range plan[:k] {
		trace = append(trace, e.RawMove(a))
		s = e.Step(s, a).Next
	}
	var wrong envs.Action
	for _, a := range e.Legal(s) {
		if b, _ := json.Marshal(a); string(b) != mustJSON(t, plan[k]) {
			wrong = a
			break
		}
	}
	if wrong == nil {
		return nil, nil, false // no other legal move to derail with
	}
	cur := e.Step(s, wrong).Next
	cp, curJSON := mustJSON(t, s), mustJSON(t, cur)
	var legal []json.RawMessage
	for _, a := range e.Legal(s) {
		legal = append(legal, e.RawMove(a))
	}
	base := prompt.Recovery{Trace: trace, Next: e.RawMove(wrong), Current: json.RawMessage(curJSON)}
	out := map[string][]contract.Message{}
	nf := base
	out[infoNone] = prompt.RecoveryPrompt(p, nf)
	eo := base
	eo.Flagged = true
	out[infoError] = prompt.RecoveryPrompt(p, eo)
	sf := eo
	sf.Checkpoint = json.RawMessage(cp)
	out[infoCheckpoint] = prompt.RecoveryPrompt(p, sf)
	sla := sf
	sla.Legal = legal
	out[infoLegal] = prompt.RecoveryPrompt(p, sla)
	return out, s, true
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRecoveryFollowsInformation: the simulated answer's success chance
// grows with what the prompt carries, a case recovered with less
// information is recovered with more, correct answers roll back to the
// checkpoint, and every reply is a JSON move list (or says it has none).
func TestRecoveryFollowsInformation(t *testing.T) {
	order := []string{infoNone, infoError, infoCheckpoint, infoLegal}
	ps := suite(t)
	recovered := map[string]int{}
	for i := range ps {
		p := &ps[i]
		if p.Environment == envs.HanoiName || p.Complexity > 5 {
			continue
		}
		prompts, cp, ok := recoveryPrompts(t, p, 1)
		if !ok {
			continue
		}
		e, _ := p.Env()
		goal, _ := p.Goal()
		prev, prevOK := -1.0, false
		for _, info := range order {
			d, ok := DecideRecovery(Profiles["strong"], 1, prompts[info])
			if !ok || d.Info != info {
				t.Fatalf("%s: not read as %s (ok %v, got %s)", p.ProblemID, info, ok, d.Info)
			}
			if d.Prob <= prev {
				t.Errorf("%s: %s chance %.3f not above %.3f", p.ProblemID, info, d.Prob, prev)
			}
			if prevOK && d.Mode != ModeCorrect {
				t.Errorf("%s: recovered with less information than %s, not with it", p.ProblemID, info)
			}
			prev, prevOK = d.Prob, d.Mode == ModeCorrect
			reply := RenderRecovery(d, 0)
			if d.Mode == ModeCorrect {
				recovered[info]++
				s := cp
				for _, raw := range d.Moves {
					a, err := e.Normalize(p, s, raw)
					if err != nil {
						t.Fatal(err)
					}
					s = e.Step(s, a).Next
				}
				if !e.IsGoal(s, goal) {
					t.Errorf("%s: a correct answer does not reach the goal from the checkpoint", p.ProblemID)
				}
			}
			if d.Mode != ModeProse && d.Mode != ModeNoPlan && !strings.Contains(reply.Content, "Final answer: [") {
				t.Errorf("%s: reply has no final list:\n%s", p.ProblemID, reply.Content)
			}
		}
	}
	if !(recovered[infoNone] <= recovered[infoError] && recovered[infoError] < recovered[infoCheckpoint] && recovered[infoCheckpoint] < recovered[infoLegal]) {
		t.Errorf("recoveries do not grow with information: %v", recovered)
	}
}

package envs

import (
	"encoding/json"
	"fmt"
)

// Problem is one problem in the PuzzleZoo JSONL schema (also used for the
// PlanBench records). States and actions are kept as raw JSON here; the
// problem's environment decodes them.
type Problem struct {
	ProblemID             string            `json:"problem_id"`
	Environment           string            `json:"environment"`
	Complexity            int               `json:"complexity"`
	InitialState          json.RawMessage   `json:"initial_state"`
	GoalState             json.RawMessage   `json:"goal_state"`
	NaturalLanguagePrompt string            `json:"natural_language_prompt"`
	OracleSolution        []json.RawMessage `json:"oracle_solution"`
	MinSteps              int               `json:"min_steps"`
	MaxSteps              int               `json:"max_steps"`
	Metadata              json.RawMessage   `json:"metadata,omitempty"`
	// HideInitialState, set only on a Derail-550 checkpoint problem stated
	// the paper's way, keeps the initial state out of every prompt (the
	// paper's one-sentence checkpoint statement shows none). Never read from
	// or written to JSON.
	HideInitialState bool `json:"-"`
}

// Env returns the problem's environment.
func (p *Problem) Env() (Env, error) { return Lookup(p.Environment) }

// Initial decodes the problem's initial state.
func (p *Problem) Initial() (State, error) {
	e, err := p.Env()
	if err != nil {
		return nil, err
	}
	return e.DecodeState(p.InitialState)
}

// Goal decodes the problem's goal state.
func (p *Problem) Goal() (State, error) {
	e, err := p.Env()
	if err != nil {
		return nil, err
	}
	return e.DecodeState(p.GoalState)
}

// MarshalJSON writes the problem with its keys in sorted order (the order
// of the published files); metadata is left out when empty.
func (p Problem) MarshalJSON() ([]byte, error) {
	oracle := p.OracleSolution
	if oracle == nil {
		oracle = []json.RawMessage{}
	}
	return json.Marshal(struct {
		Complexity            int               `json:"complexity"`
		Environment           string            `json:"environment"`
		GoalState             json.RawMessage   `json:"goal_state"`
		InitialState          json.RawMessage   `json:"initial_state"`
		MaxSteps              int               `json:"max_steps"`
		Metadata              json.RawMessage   `json:"metadata,omitempty"`
		MinSteps              int               `json:"min_steps"`
		NaturalLanguagePrompt string            `json:"natural_language_prompt"`
		OracleSolution        []json.RawMessage `json:"oracle_solution"`
		ProblemID             string            `json:"problem_id"`
	}{p.Complexity, p.Environment, p.GoalState, p.InitialState, p.MaxSteps, p.Metadata, p.MinSteps,
		p.NaturalLanguagePrompt, oracle, p.ProblemID})
}

// Oracle decodes the problem's oracle plan.
func (p *Problem) Oracle() ([]Action, error) {
	e, err := p.Env()
	if err != nil {
		return nil, err
	}
	out := make([]Action, len(p.OracleSolution))
	for i, raw := range p.OracleSolution {
		if out[i], err = e.DecodeAction(raw); err != nil {
			return nil, fmt.Errorf("oracle_solution[%d]: %v", i, err)
		}
	}
	return out, nil
}

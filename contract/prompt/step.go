package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/envs"
)

// StepSystem is the system message of a step-by-step agent prompt: the
// answer is one JSON object.
const StepSystem = "You are an expert at planning puzzles. You answer with exactly one JSON object and nothing else: " +
	"no code fences, no prose, double quotes around every key and string."

// StepMarker separates the puzzle from the action choice in a step prompt.
const StepMarker = "=== STEP: choose the next move ==="

// Labels of the step block (matched at the start of a line below the
// marker).
const (
	labelStepState   = "Current verified state (JSON): "
	labelStepOptions = "Legal move options (JSON, id and move): "
	labelStepBlocked = "Blocked option ids at this state (JSON): "
	labelStepReason  = "Why you are asked again: "
	labelStepMessage = "Last verifier message: "
	stepNone         = "none"
)

// StepOption is one legal move offered to the step-by-step agent.
type StepOption struct {
	// ID is the option's id ("a0", "a1", ... in the environment's legal
	// order).
	ID string `json:"id"`
	// Move is the move as a model prints it.
	Move json.RawMessage `json:"move"`
}

// Step is what a step prompt carries beyond the puzzle's statement and
// goal.
type Step struct {
	// State is the current verified state.
	State json.RawMessage
	// Options are the legal moves from State, with their ids.
	Options []StepOption
	// Blocked are the option ids refused at State so far.
	Blocked []string
	// RetryReason says why the previous proposal was not committed
	// ("" when it was, or at the first call).
	RetryReason string
	// Message is the last verifier message ("" when none).
	Message string
}

// StepPrompt builds one action-choice prompt of the step-by-step agent for
// problem p: its statement and machine-readable problem lines, then the
// current state, the options, the blocked ids, the retry reason and the
// last verifier message, and the request for one JSON object naming an
// option id and a ranking of ids.
func StepPrompt(p *envs.Problem, s Step) []contract.Message {
	var b strings.Builder
	stable(&b, p)
	b.WriteString("\n")
	b.WriteString(StepMarker)
	b.WriteString("\n")
	b.WriteString("You solve this puzzle one move at a time; a checker verifies every move before it is applied.\n")
	fmt.Fprintf(&b, "%s%s\n", labelStepState, oneLine(s.State))
	opts, _ := json.Marshal(nonNilOptions(s.Options))
	fmt.Fprintf(&b, "%s%s\n", labelStepOptions, oneLine(opts))
	blocked, _ := json.Marshal(nonNilStrings(s.Blocked))
	fmt.Fprintf(&b, "%s%s\n", labelStepBlocked, blocked)
	fmt.Fprintf(&b, "%s%s\n", labelStepReason, orNone(s.RetryReason))
	fmt.Fprintf(&b, "%s%s\n", labelStepMessage, orNone(s.Message))
	b.WriteString("\n")
	if s.RetryReason != "" {
		b.WriteString("Your previous choice was not applied. Start again from the current verified state above and pick another option.\n")
	}
	b.WriteString("Pick one option id from the legal move options; never make up an id, and avoid the blocked ids. " +
		"Order the ids you would consider from best to worst in ranked_action_ids, the best first, and give it as action_id. " +
		"Answer with one JSON object of the form\n" +
		`{"action_id": "a0", "ranked_action_ids": ["a0", "a2"], "predicted_next_state": {...}}` + "\n")
	return []contract.Message{{Role: contract.RoleSystem, Content: StepSystem}, {Role: contract.RoleUser, Content: b.String()}}
}

func orNone(s string) string {
	if s = oneLineText(s); s == "" {
		return stepNone
	}
	return s
}

func nonNilOptions(o []StepOption) []StepOption {
	if o == nil {
		return []StepOption{}
	}
	out := make([]StepOption, len(o))
	for i, x := range o {
		out[i] = StepOption{ID: x.ID, Move: compact(x.Move)}
	}
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ParsedStep is what ParseStep recovers from a step prompt.
type ParsedStep struct {
	Environment string
	Goal        json.RawMessage
	Step
}

// ErrNotStep is returned by ParseStep for a prompt without the StepMarker
// line.
var ErrNotStep = errors.New("not a step prompt")

var stepLabels = []string{labelStepState, labelStepOptions, labelStepBlocked, labelStepReason, labelStepMessage}

// ParseStep reads a prompt built by StepPrompt back (the simulated
// server's view of it). RetryReason and Message are "" when the prompt
// says none.
func ParseStep(msgs []contract.Message) (ParsedStep, error) {
	hl, below, ok := markedBlock(msgs, StepMarker)
	if !ok {
		return ParsedStep{}, ErrNotStep
	}
	var out ParsedStep
	var err error
	if out.Environment = hl[labelEnv]; out.Environment == "" {
		return ParsedStep{}, fmt.Errorf("step prompt has no %q line", strings.TrimSpace(labelEnv))
	}
	if out.Goal, err = jsonLine(hl, labelGoal); err != nil {
		return ParsedStep{}, err
	}
	tl := labelledLines(below, stepLabels)
	if out.State, err = jsonLine(tl, labelStepState); err != nil {
		return ParsedStep{}, err
	}
	raw, err := jsonLine(tl, labelStepOptions)
	if err != nil {
		return ParsedStep{}, err
	}
	if err := json.Unmarshal(raw, &out.Options); err != nil {
		return ParsedStep{}, fmt.Errorf("step prompt: options: %v", err)
	}
	if raw, err = jsonLine(tl, labelStepBlocked); err != nil {
		return ParsedStep{}, err
	}
	if err := json.Unmarshal(raw, &out.Blocked); err != nil {
		return ParsedStep{}, fmt.Errorf("step prompt: blocked ids: %v", err)
	}
	if len(out.Options) == 0 {
		out.Options = nil
	}
	if len(out.Blocked) == 0 {
		out.Blocked = nil
	}
	for _, x := range []struct {
		label string
		to    *string
	}{{labelStepReason, &out.RetryReason}, {labelStepMessage, &out.Message}} {
		if v := tl[x.label]; v != stepNone {
			*x.to = v
		}
	}
	return out, nil
}

// StepChoice is a step-by-step agent's reply as read by ParseStepChoice.
type StepChoice struct {
	// ActionID is the chosen option id (never empty).
	ActionID string
	// Ranked are the ranked ids that are strings, in order (other
	// elements are dropped; nil when there is no list).
	Ranked []string
	// Predicted is the predicted next state when it is an object.
	Predicted json.RawMessage
}

// ParseStepChoice reads an action choice from a reply as the reference
// does: the reply's JSON object (program.JSONObject) must have a non-empty
// string action_id. It never panics; an error means the
// reply is unusable.
func ParseStepChoice(reply string) (StepChoice, error) {
	obj, err := program.JSONObject(reply)
	if err != nil {
		return StepChoice{}, err
	}
	var c StepChoice
	if firstNonSpace(obj["action_id"]) != '"' || json.Unmarshal(obj["action_id"], &c.ActionID) != nil || c.ActionID == "" {
		return StepChoice{}, errors.New("the reply has no non-empty action_id string")
	}
	var ranked []json.RawMessage
	if json.Unmarshal(obj["ranked_action_ids"], &ranked) == nil {
		for _, r := range ranked {
			var s string
			if firstNonSpace(r) == '"' && json.Unmarshal(r, &s) == nil {
				c.Ranked = append(c.Ranked, s)
			}
		}
	}
	if p := obj["predicted_next_state"]; len(p) > 0 && p[0] == '{' {
		c.Predicted = compact(p)
	}
	return c, nil
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

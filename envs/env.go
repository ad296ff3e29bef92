// Package envs holds the five verifier environments of the RePoT evaluation,
// the PuzzleZoo problem generators, the problem suites and the loaders for the
// published JSONL formats. It uses the standard library only.
package envs

import "encoding/json"

// ErrorKind classifies why a step was rejected.
type ErrorKind string

// The error kinds of the reference verifiers. A normalization failure is a
// "format error": Normalize returns an error and no step is taken.
const (
	NoError              ErrorKind = ""
	InvalidTransition    ErrorKind = "INVALID_TRANSITION"
	ConstraintViolation  ErrorKind = "CONSTRAINT_VIOLATION"
	VerifierDisagreement ErrorKind = "VERIFIER_DISAGREEMENT"
)

// State is an environment state. Its JSON is the published shape, with object
// keys sorted, and is byte-for-byte stable: decoding and re-encoding a state
// gives the same bytes.
type State interface {
	json.Marshaler
}

// Action is a normalized action (the canonical object of the published data,
// such as {"disk":1,"from":"A","to":"C","type":"move"}), JSON as for State.
type Action interface {
	json.Marshaler
}

// Step is the verifier's verdict on applying one action to a state.
type Step struct {
	// Next is the state after the action; nil when the action is invalid.
	Next State
	// Valid reports whether the action was legal in the state.
	Valid bool
	// Kind says why an invalid action was rejected.
	Kind ErrorKind
	// Message tells a model plainly what was wrong; it is shown in repair prompts.
	Message string
}

// Env is one verifier environment. Every function is deterministic and safe
// for concurrent use.
type Env interface {
	// Name is the environment's name in the data ("tower_of_hanoi", ...).
	Name() string
	// DecodeState parses a state in the published JSON shape.
	DecodeState(data []byte) (State, error)
	// DecodeAction parses a normalized action in the published JSON shape.
	DecodeAction(data []byte) (Action, error)
	// Normalize turns a move as a model prints it (a JSON value such as
	// [2, 0, 1] or ["actor1","agent1"]) into the canonical action. An error is
	// a format error whose text is shown to the model.
	Normalize(p *Problem, s State, raw json.RawMessage) (Action, error)
	// Step applies an action.
	Step(s State, a Action) Step
	// IsGoal reports whether s satisfies goal.
	IsGoal(s, goal State) bool
	// Legal lists the legal actions from s in a stable order.
	Legal(s State) []Action
	// RawMove renders an action as a model prints it (the inverse of
	// Normalize: Normalize(p, s, RawMove(a)) equals a when a is legal in s).
	RawMove(a Action) json.RawMessage
}

// Package prompt builds the prompts of the RePoT methods and parses them back.
//
// Every prompt is a system message and one user message. The user message
// holds the problem's natural-language statement, an instruction, and a
// machine-readable block (Environment, Initial state, Goal state as one-line
// JSON, Max steps, and for fresh retries an Attempt line). A repair prompt
// repeats that stable part, then a fixed Marker line, then the checkpoint
// block. Parse recovers the machine-readable fields, which is how the
// simulated server reads the problem.
//
// The Attempt line exists because a fresh retry (pot-retry's second call,
// the adaptive fresh retries) sends the same problem again: a deterministic
// server, such as the simulated one, answers identical prompts identically,
// so the attempt number makes the second call an independent draw. A real
// model sees a harmless "Attempt: 2" line.
package prompt

import "encoding/json"

// Variant is the kind of repair prompt.
type Variant string

// The repair variants: Standard repairs the suffix from the verified state;
// NoPrefix omits the verified tail of moves (Derail ablation); Restart asks
// for a whole plan from the initial state but shows the checkpoint
// information (Derail ablation).
const (
	Standard Variant = "standard"
	NoPrefix Variant = "no-prefix"
	Restart  Variant = "restart"
)

// TailLen is how many of the last verified moves a repair prompt shows.
const TailLen = 4

// MaxLegal is how many legal moves a repair prompt lists at most.
const MaxLegal = 24

// Marker separates the stable part of a repair prompt from its checkpoint
// block.
const Marker = "=== CHECKPOINT: the part below was verified by the environment ==="

// Checkpoint is what a repair prompt tells the model about the verified
// prefix of its previous plan. Moves are raw moves as a model prints them
// (env.RawMove), JSON compacted.
type Checkpoint struct {
	// Verified is the number of verified moves from the initial state.
	Verified int `json:"verified"`
	// Tail is the last (at most TailLen) verified moves, oldest first.
	Tail []json.RawMessage `json:"tail"`
	// State is the state after the verified moves.
	State json.RawMessage `json:"state"`
	// Legal is the legal moves from State, at most MaxLegal.
	Legal []json.RawMessage `json:"legal"`
	// LegalTotal is how many legal moves State has (>= len(Legal)).
	LegalTotal int `json:"legal_total"`
	// Message is the verifier's message about the rejected move (or why the
	// plan stopped), one line.
	Message string `json:"message"`
}

// Parsed is what Parse recovers from a prompt.
type Parsed struct {
	Environment string
	// Initial and Goal are the problem's states, one-line JSON. Initial is
	// nil when the prompt shows no initial state (a Derail checkpoint
	// problem stated the paper's way).
	Initial json.RawMessage
	Goal    json.RawMessage
	// MaxSteps is the problem's step limit (0 if the prompt has none).
	MaxSteps int
	// Attempt is 1 for a first call and n for the n-th fresh attempt.
	Attempt int
	// Repair is set for repair prompts.
	Repair *ParsedRepair
}

// ParsedRepair is the checkpoint block of a repair prompt.
type ParsedRepair struct {
	Variant    Variant
	Checkpoint Checkpoint
}

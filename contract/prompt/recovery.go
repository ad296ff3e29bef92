package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
)

// RecoverySystem is the system message of a prompted Derail-550 recovery
// prompt: the answer is a JSON move list, not a program.
const RecoverySystem = "You are an expert at planning puzzles. You answer with the list of moves as JSON."

// RecoveryMarker separates the puzzle from the trace in a recovery prompt.
const RecoveryMarker = "=== RECOVERY: a trace of moves for this puzzle went wrong ==="

// Labels of the recovery block (matched at the start of a line below the
// marker).
const (
	labelTraceMoves = "Verified trace moves (JSON, in order): "
	labelTraceNext  = "Trace's next move (JSON): "
	labelTraceState = "Trace's current state (JSON): "
	labelFlagged    = "Feedback: "
	labelCheckpoint = "Checkpoint to roll back to, the last valid state (JSON): "
	labelCPLegal    = "Legal moves from the checkpoint (JSON): "
	flaggedText     = "the trace's last move, or the state it produced, was flagged as wrong."
)

// Recovery is what a prompted recovery prompt carries beyond the puzzle's
// statement and goal. Moves are raw moves as a model prints them.
type Recovery struct {
	// Trace are the k verified oracle moves, in order.
	Trace []json.RawMessage
	// Next is the injected move, shown as the trace's next move.
	Next json.RawMessage
	// Current is injected_state, shown as the trace's current state.
	Current json.RawMessage
	// Flagged says that the last move or state was flagged as wrong
	// (error_only and the two state conditions).
	Flagged bool
	// Checkpoint, when not nil, is last_valid_state given as the state to
	// roll back to (the two state conditions).
	Checkpoint json.RawMessage
	// Legal, when not nil, lists every legal move from Checkpoint
	// (state_plus_legal_actions).
	Legal []json.RawMessage
}

// RecoveryPrompt builds the one-call prompt of a prompted Derail-550
// condition for source problem p: its statement with the machine-readable
// lines every prompt has (environment, initial and goal state, max steps),
// the trace (k
// verified moves, the next move, the current state), then what r adds, and
// the request for one JSON move list.
func RecoveryPrompt(p *envs.Problem, r Recovery) []contract.Message {
	var b strings.Builder
	stable(&b, p)
	b.WriteString("\n")
	b.WriteString(RecoveryMarker)
	b.WriteString("\n")
	fmt.Fprintf(&b, "A solver worked on this puzzle. Its first %d moves, all verified, were:\n", len(r.Trace))
	fmt.Fprintf(&b, "%s%s\n", labelTraceMoves, rawList(r.Trace))
	fmt.Fprintf(&b, "%s%s\n", labelTraceNext, oneLine(r.Next))
	fmt.Fprintf(&b, "%s%s\n", labelTraceState, oneLine(r.Current))
	b.WriteString("\n")
	switch {
	case r.Checkpoint != nil:
		fmt.Fprintf(&b, "%s%s\n", labelFlagged, flaggedText)
		fmt.Fprintf(&b, "%s%s\n", labelCheckpoint, oneLine(r.Checkpoint))
		if r.Legal != nil {
			fmt.Fprintf(&b, "%s%s\n", labelCPLegal, rawList(r.Legal))
		}
		b.WriteString("Roll back to the checkpoint and give the remaining moves from the checkpoint state to the goal state.\n")
	case r.Flagged:
		fmt.Fprintf(&b, "%s%s\n", labelFlagged, flaggedText)
		b.WriteString("Recover from this and give the moves that reach the goal state.\n")
	default:
		b.WriteString("Continue from the trace's current state: give the moves that take the puzzle from there to the goal state.\n")
	}
	b.WriteString("Answer with the moves as one JSON list, one element per move in the puzzle's move format. " +
		"Do not write a program. End your answer with a line of the form\nFinal answer: [...]\n")
	return []contract.Message{{Role: contract.RoleSystem, Content: RecoverySystem}, {Role: contract.RoleUser, Content: b.String()}}
}

// ParsedRecovery is what ParseRecovery recovers from a recovery prompt.
type ParsedRecovery struct {
	Environment string
	Initial     json.RawMessage
	Goal        json.RawMessage
	Recovery
}

// ErrNotRecovery is returned by ParseRecovery for a prompt without the
// RecoveryMarker line.
var ErrNotRecovery = errors.New("not a recovery prompt")

var recoveryLabels = []string{labelTraceMoves, labelTraceNext, labelTraceState, labelFlagged, labelCheckpoint, labelCPLegal}

// ParseRecovery reads a prompt built by RecoveryPrompt back (the simulated
// server's view of it).
func ParseRecovery(msgs []contract.Message) (ParsedRecovery, error) {
	hl, below, ok := markedBlock(msgs, RecoveryMarker)
	if !ok {
		return ParsedRecovery{}, ErrNotRecovery
	}
	var out ParsedRecovery
	var err error
	if out.Environment = hl[labelEnv]; out.Environment == "" {
		return ParsedRecovery{}, fmt.Errorf("recovery prompt has no %q line", strings.TrimSpace(labelEnv))
	}
	if out.Initial, err = jsonLine(hl, labelInitial); err != nil {
		return ParsedRecovery{}, err
	}
	if out.Goal, err = jsonLine(hl, labelGoal); err != nil {
		return ParsedRecovery{}, err
	}
	tl := labelledLines(below, recoveryLabels)
	if out.Trace, err = listLine(tl, labelTraceMoves); err != nil {
		return ParsedRecovery{}, err
	}
	if out.Next, err = jsonLine(tl, labelTraceNext); err != nil {
		return ParsedRecovery{}, err
	}
	if out.Current, err = jsonLine(tl, labelTraceState); err != nil {
		return ParsedRecovery{}, err
	}
	_, out.Flagged = tl[labelFlagged]
	if _, ok := tl[labelCheckpoint]; ok {
		if out.Checkpoint, err = jsonLine(tl, labelCheckpoint); err != nil {
			return ParsedRecovery{}, err
		}
	}
	if _, ok := tl[labelCPLegal]; ok {
		if out.Legal, err = listLine(tl, labelCPLegal); err != nil {
			return ParsedRecovery{}, err
		}
		if out.Legal == nil {
			out.Legal = []json.RawMessage{}
		}
	}
	return out, nil
}

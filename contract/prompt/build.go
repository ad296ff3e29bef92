package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
)

// System is the system message of every prompt. The client adds the
// thinking-off prefix when the model is configured that way.
const System = "You are an expert at planning puzzles. You solve them by writing a short, " +
	"correct Python 3 program that computes the plan and prints it."

// Labels of the machine-readable lines. Parse looks for them at the start of
// a line.
const (
	labelEnv      = "Environment: "
	labelInitial  = "Initial state (JSON): "
	labelGoal     = "Goal state (JSON): "
	labelMaxSteps = "Max steps: "
	labelAttempt  = "Attempt: "
	labelVerified = "Verified moves so far: "
	labelTail     = "Last verified moves (JSON, oldest first): "
	labelState    = "Verified state (JSON): "
	labelLegal    = "Legal moves from the verified state (JSON): "
	labelLegalN   = "Number of legal moves from the verified state: "
	labelMessage  = "Verifier message: "
	labelFrom     = "Your plan starts from: "
	fromVerified  = "the verified state"
	fromInitial   = "the initial state"
)

// instruction asks for the program; what says which moves it must print.
func instruction(what string) string {
	return "Write a Python 3 program that computes " + what + " and prints exactly one line of the form\n" +
		"moves = [...]\n" +
		"listing every move in order, in the move format described above. Use only the Python standard library " +
		"(no files, network or environment variables); the program must finish within a few seconds. " +
		"Put the program in a single ```python code block."
}

// Initial is the first call's prompt for p (attempt 1).
func Initial(p *envs.Problem) []contract.Message { return Fresh(p, 1) }

// Fresh is the prompt of the attempt-th independent fresh call for p
// (attempt 1 is Initial). Attempts above 1 carry an "Attempt: n" line so
// that a deterministic server draws them independently.
func Fresh(p *envs.Problem, attempt int) []contract.Message {
	var b strings.Builder
	stable(&b, p)
	if attempt > 1 {
		fmt.Fprintf(&b, "%s%d\n", labelAttempt, attempt)
	}
	b.WriteString("\n")
	b.WriteString(instruction("a complete, valid plan from the initial state to the goal state"))
	b.WriteString("\n")
	return []contract.Message{{Role: contract.RoleSystem, Content: System}, {Role: contract.RoleUser, Content: b.String()}}
}

// stable writes the part shared by all prompts of p: the statement and the
// machine-readable problem lines.
func stable(b *strings.Builder, p *envs.Problem) {
	b.WriteString(strings.TrimSpace(p.NaturalLanguagePrompt))
	b.WriteString("\n\n")
	fmt.Fprintf(b, "%s%s\n", labelEnv, p.Environment)
	if !p.HideInitialState {
		fmt.Fprintf(b, "%s%s\n", labelInitial, oneLine(p.InitialState))
	}
	fmt.Fprintf(b, "%s%s\n", labelGoal, oneLine(p.GoalState))
	if p.MaxSteps > 0 {
		fmt.Fprintf(b, "%s%d\n", labelMaxSteps, p.MaxSteps)
	}
}

// Repair is the repair prompt for p from checkpoint c: the stable part, the
// Marker line, then the checkpoint block and the instruction for variant v.
func Repair(p *envs.Problem, c Checkpoint, v Variant) []contract.Message {
	var b strings.Builder
	stable(&b, p)
	b.WriteString("\n")
	b.WriteString(Marker)
	b.WriteString("\n")
	b.WriteString("A plan you wrote earlier was checked move by move. Its first moves are valid; then a move was rejected or the plan stopped short of the goal.\n")
	fmt.Fprintf(&b, "%s%d\n", labelVerified, c.Verified)
	if v != NoPrefix {
		fmt.Fprintf(&b, "%s%s\n", labelTail, rawList(c.Tail))
	}
	fmt.Fprintf(&b, "%s%s\n", labelState, oneLine(c.State))
	total := c.LegalTotal
	if total < len(c.Legal) {
		total = len(c.Legal)
	}
	fmt.Fprintf(&b, "%s%d\n", labelLegalN, total)
	fmt.Fprintf(&b, "%s%s\n", labelLegal, rawList(c.Legal))
	fmt.Fprintf(&b, "%s%s\n", labelMessage, oneLineText(c.Message))
	b.WriteString("\n")
	if v == Restart {
		fmt.Fprintf(&b, "%s%s\n", labelFrom, fromInitial)
		b.WriteString("Write a new plan for the whole problem, starting from the INITIAL state, using what the checkpoint above tells you to avoid the mistake.\n")
		b.WriteString(instruction("a complete, valid plan from the initial state to the goal state"))
	} else {
		fmt.Fprintf(&b, "%s%s\n", labelFrom, fromVerified)
		b.WriteString("Do not repeat the verified moves: print only the moves to apply FROM THE VERIFIED STATE to reach the goal state.\n")
		b.WriteString(instruction("the remaining moves from the verified state to the goal state"))
	}
	b.WriteString("\n")
	return []contract.Message{{Role: contract.RoleSystem, Content: System}, {Role: contract.RoleUser, Content: b.String()}}
}

// oneLine compacts JSON onto one line; invalid JSON is flattened as text.
func oneLine(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return oneLineText(string(raw))
	}
	return buf.String()
}

// oneLineText replaces line breaks by spaces.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ")), " ")
}

// rawList renders moves as one JSON array on one line.
func rawList(moves []json.RawMessage) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range moves {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(oneLine(m))
	}
	b.WriteByte(']')
	return b.String()
}

package prompt

import (
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
)

// SampleSystem is the system message of a chain-of-thought prompt (Sample):
// the model reasons in prose and answers with the moves themselves, not a
// program.
const SampleSystem = "You are an expert at planning puzzles. Think the problem through step by step, " +
	"then give the complete plan as a JSON object."

// SampleMarker is the line that marks a chain-of-thought prompt (IsSample):
// it follows the machine-readable problem lines and precedes the answer
// instruction.
const SampleMarker = "=== ANSWER WITH THE MOVES AS JSON (no program) ==="

// Sample is the chain-of-thought prompt for p, used by cot and by each of
// self-consistency's samples (all samples send this same prompt; the
// request seed makes them independent): the statement and the
// machine-readable problem lines, SampleMarker, and an instruction asking
// for every move, in order, as {"actions": [...]} in the move format the
// statement describes. Parse reads its problem lines like those of Initial.
func Sample(p *envs.Problem) []contract.Message {
	var b strings.Builder
	stable(&b, p)
	b.WriteString("\n")
	b.WriteString(SampleMarker)
	b.WriteString("\n")
	b.WriteString("Work out a complete, valid plan from the initial state to the goal state. You may reason step by step first. " +
		"Then end your answer with one JSON object of the form\n" +
		"{\"actions\": [...]}\n" +
		"listing every move in order, each in the move format described above. Do not write a program.\n")
	return []contract.Message{{Role: contract.RoleSystem, Content: SampleSystem}, {Role: contract.RoleUser, Content: b.String()}}
}

// IsSample reports whether msgs is a chain-of-thought prompt built by
// Sample: its last user message has a SampleMarker line.
func IsSample(msgs []contract.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != contract.RoleUser {
			continue
		}
		for _, l := range strings.Split(msgs[i].Content, "\n") {
			if strings.TrimSpace(l) == SampleMarker {
				return true
			}
		}
		return false
	}
	return false
}

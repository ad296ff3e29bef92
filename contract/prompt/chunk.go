package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
)

// ChunkSystemJSON is the system message of a VEX proposal prompt of the
// JSON proposer: the answer is a JSON object, not a program. The code
// proposer's prompts use System.
const ChunkSystemJSON = "You are an expert at planning puzzles. You answer with the next moves as one JSON object."

// ChunkMarker separates the stable part of a VEX proposal prompt (the
// statement and the problem lines, the same in every call of a run) from
// its verified-state block.
const ChunkMarker = "=== VERIFIED STATE: the part below was checked by the environment ==="

// VEX proposer kinds, as the Proposer line of a proposal prompt names them.
const (
	ChunkJSON = "json"
	ChunkCode = "code"
)

// Labels of the verified-state block of a proposal prompt (matched at the
// start of a line below ChunkMarker), beyond the repair labels it shares.
const (
	labelProposer = "Proposer: "
	labelBlocked  = "Rejected moves at this state, do not propose them again (JSON): "
	labelChunk    = "Most moves in this answer: "
	labelHidden   = "Verified moves: "
	hiddenText    = "not shown"
)

// BlockedMove is a move the verifier rejected at the current verified
// state, with its message.
type BlockedMove struct {
	Move    json.RawMessage `json:"move"`
	Message string          `json:"message"`
}

// Chunk is what a VEX proposal prompt tells the model beyond the problem.
// Moves are raw moves as a model prints them (env.RawMove), JSON compacted.
type Chunk struct {
	// Proposer is ChunkJSON or ChunkCode.
	Proposer string
	// HidePrefix hides the verified moves: the prompt shows a count of 0
	// and no tail (the vex-no-prefix Derail condition).
	HidePrefix bool
	// Verified is the number of moves committed so far.
	Verified int
	// Tail is the last (at most TailLen) committed moves, oldest first.
	Tail []json.RawMessage
	// State is the current verified state.
	State json.RawMessage
	// Legal is the legal moves from State, at most MaxLegal.
	Legal []json.RawMessage
	// LegalTotal is how many legal moves State has (>= len(Legal)).
	LegalTotal int
	// Blocked are the moves rejected at State so far, with their messages.
	Blocked []BlockedMove
	// Message is the verifier's last message ("" for none), one line.
	Message string
	// Size is the most moves the answer may propose (K).
	Size int
}

// NewChunk builds the chunk block of proposer kind at a verified state:
// the committed moves (the last TailLen are shown), the state, its legal
// moves, the moves rejected there and the last verifier message.
func NewChunk(e envs.Env, proposer string, committed []envs.Action, state envs.State, blocked []BlockedMove, message string, size int, hide bool) (Chunk, error) {
	cp, err := NewCheckpoint(e, committed, state, message)
	if err != nil {
		return Chunk{}, err
	}
	c := Chunk{Proposer: proposer, HidePrefix: hide, Verified: cp.Verified, Tail: cp.Tail, State: cp.State,
		Legal: cp.Legal, LegalTotal: cp.LegalTotal, Message: cp.Message, Size: size}
	if hide {
		c.Verified, c.Tail = 0, nil
	}
	for _, b := range blocked {
		c.Blocked = append(c.Blocked, BlockedMove{Move: compact(b.Move), Message: oneLineText(b.Message)})
	}
	return c, nil
}

// ChunkPrompt is a VEX proposal prompt for p: the stable part, the
// ChunkMarker line, then the verified-state block and the request for at
// most c.Size moves from the verified state, as {"actions":[...]} (JSON
// proposer) or as a program printing `moves = [...]` (code proposer).
func ChunkPrompt(p *envs.Problem, c Chunk) []contract.Message {
	var b strings.Builder
	stable(&b, p)
	b.WriteString("\n")
	b.WriteString(ChunkMarker)
	b.WriteString("\n")
	b.WriteString("You solve this puzzle a few moves at a time. Each answer proposes the next moves; the environment checks them one by one, keeps the valid ones and drops everything from the first rejected move on.\n")
	fmt.Fprintf(&b, "%s%s\n", labelProposer, c.Proposer)
	if c.HidePrefix {
		fmt.Fprintf(&b, "%s%s\n", labelHidden, hiddenText)
		fmt.Fprintf(&b, "%s0\n", labelVerified)
	} else {
		fmt.Fprintf(&b, "%s%d\n", labelVerified, c.Verified)
		fmt.Fprintf(&b, "%s%s\n", labelTail, rawList(c.Tail))
	}
	fmt.Fprintf(&b, "%s%s\n", labelState, oneLine(c.State))
	fmt.Fprintf(&b, "%s%d\n", labelLegalN, max(c.LegalTotal, len(c.Legal)))
	fmt.Fprintf(&b, "%s%s\n", labelLegal, rawList(c.Legal))
	fmt.Fprintf(&b, "%s%s\n", labelBlocked, blockedList(c.Blocked))
	msg := oneLineText(c.Message)
	if msg == "" {
		msg = "none"
	}
	fmt.Fprintf(&b, "%s%s\n", labelMessage, msg)
	fmt.Fprintf(&b, "%s%d\n", labelChunk, c.Size)
	b.WriteString("\n")
	system := System
	if c.Proposer == ChunkCode {
		fmt.Fprintf(&b, "Write a Python 3 program that computes the next moves (at most %d) to apply FROM THE VERIFIED STATE above, "+
			"not from the start, and prints exactly one line of the form\nmoves = [...]\n"+
			"in the move format described above. Do not repeat moves that are already verified. Printing fewer moves is fine when you are unsure. "+
			"Use only the Python standard library (no files, network or environment variables); the program must finish within a few seconds. "+
			"Put the program in a single ```python code block.\n", c.Size)
	} else {
		system = ChunkSystemJSON
		fmt.Fprintf(&b, "Give the next moves (at most %d) to apply FROM THE VERIFIED STATE above, in the move format described above, "+
			"as one JSON object of the form\n{\"actions\": [...]}\nand nothing else.\n", c.Size)
	}
	return []contract.Message{{Role: contract.RoleSystem, Content: system}, {Role: contract.RoleUser, Content: b.String()}}
}

// blockedList renders blocked moves as one JSON array on one line.
func blockedList(bs []BlockedMove) string {
	if len(bs) == 0 {
		return "[]"
	}
	out, err := json.Marshal(bs)
	if err != nil {
		return "[]"
	}
	return string(out)
}

// ParsedChunk is what ParseChunk recovers from a proposal prompt.
type ParsedChunk struct {
	Environment string
	// Initial is nil when the prompt shows no initial state.
	Initial  json.RawMessage
	Goal     json.RawMessage
	MaxSteps int
	Chunk    Chunk
}

// ErrNotChunk is returned by ParseChunk for a prompt without the
// ChunkMarker line.
var ErrNotChunk = errors.New("not a VEX proposal prompt")

var chunkLabels = []string{labelProposer, labelHidden, labelVerified, labelTail, labelState, labelLegalN, labelLegal,
	labelBlocked, labelMessage, labelChunk}

// ParseChunk reads a prompt built by ChunkPrompt back (the simulated
// server's view of it), from the last user message.
func ParseChunk(msgs []contract.Message) (ParsedChunk, error) {
	hl, below, ok := markedBlock(msgs, ChunkMarker)
	if !ok {
		return ParsedChunk{}, ErrNotChunk
	}
	var out ParsedChunk
	var err error
	if out.Environment = hl[labelEnv]; out.Environment == "" {
		return ParsedChunk{}, fmt.Errorf("proposal prompt has no %q line", strings.TrimSpace(labelEnv))
	}
	if _, ok := hl[labelInitial]; ok {
		if out.Initial, err = jsonLine(hl, labelInitial); err != nil {
			return ParsedChunk{}, err
		}
	}
	if out.Goal, err = jsonLine(hl, labelGoal); err != nil {
		return ParsedChunk{}, err
	}
	if out.MaxSteps, err = intLine(hl, labelMaxSteps, 0); err != nil {
		return ParsedChunk{}, err
	}
	tl := labelledLines(below, chunkLabels)
	c := &out.Chunk
	switch c.Proposer = tl[labelProposer]; c.Proposer {
	case ChunkJSON, ChunkCode:
	default:
		return ParsedChunk{}, fmt.Errorf("proposal prompt: unknown proposer %q", c.Proposer)
	}
	c.HidePrefix = tl[labelHidden] == hiddenText
	if c.Verified, err = intLine(tl, labelVerified, 0); err != nil {
		return ParsedChunk{}, err
	}
	if _, ok := tl[labelTail]; ok && !c.HidePrefix {
		if c.Tail, err = listLine(tl, labelTail); err != nil {
			return ParsedChunk{}, err
		}
	}
	if c.State, err = jsonLine(tl, labelState); err != nil {
		return ParsedChunk{}, err
	}
	if c.LegalTotal, err = intLine(tl, labelLegalN, 0); err != nil {
		return ParsedChunk{}, err
	}
	if c.Legal, err = listLine(tl, labelLegal); err != nil {
		return ParsedChunk{}, err
	}
	raw, err := jsonLine(tl, labelBlocked)
	if err != nil {
		return ParsedChunk{}, err
	}
	if err := json.Unmarshal(raw, &c.Blocked); err != nil {
		return ParsedChunk{}, fmt.Errorf("proposal prompt line %q is not a list of rejected moves: %v", strings.TrimSpace(labelBlocked), err)
	}
	for i, b := range c.Blocked {
		if !json.Valid(b.Move) {
			return ParsedChunk{}, fmt.Errorf("proposal prompt: rejected move %d has no move", i+1)
		}
	}
	if len(c.Blocked) == 0 {
		c.Blocked = nil
	}
	if c.Message = tl[labelMessage]; c.Message == "none" {
		c.Message = ""
	}
	if c.Size, err = intLine(tl, labelChunk, 0); err != nil {
		return ParsedChunk{}, err
	}
	if c.Size == 0 {
		return ParsedChunk{}, fmt.Errorf("proposal prompt has no positive %q line", strings.TrimSpace(labelChunk))
	}
	return out, nil
}

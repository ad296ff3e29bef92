package simserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// CharsPerToken is the simulation's token size: a text of n bytes counts
// ceil(n/CharsPerToken) tokens.
const CharsPerToken = 4

// Tokens counts the tokens of text (deterministic: the same text always
// counts the same).
func Tokens(text string) int { return (len(text) + CharsPerToken - 1) / CharsPerToken }

// DefaultMaxTokens is the completion cap when a request gives none.
const DefaultMaxTokens = 16384

// Reply is a rendered answer.
type Reply struct {
	Content      string
	FinishReason string
	// Reasoning is the <think> part of Content when thinking is on.
	Reasoning string
}

// Render writes the reply text of decision d, cut at maxTokens.
func Render(d Decision, maxTokens int, thinking bool) Reply {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	var body string
	switch d.Mode {
	case ModeChat:
		body = "OK. (This is the repot simulation, a stand-in for a language model; it answers RePoT planning prompts.)"
	case ModeNoPlan:
		body = "I could not find a plan for this problem."
	case ModeNoState:
		body = "The prompt does not show the state to continue from, so I cannot compute the moves.\n\n```python\nprint(\"moves = []\")\n```\n"
	case ModeEmpty:
		body = ""
	case ModeProse:
		body = proseReply(d)
	case ModeCrash:
		body = fence(crashProgram(d))
	case ModeTruncated:
		body = truncatedReply(d, maxTokens)
	default: // correct, wrong move, short plan
		body = fence(planProgram(d))
	}
	var reasoning string
	if thinking && d.Mode != ModeChat {
		reasoning = fmt.Sprintf("<think>\nThe problem is %s. I will write the plan as a program and print it.\n</think>\n\n", d.Problem.Environment)
	}
	content := reasoning + body
	limit := maxTokens * CharsPerToken
	if len(content) > limit {
		content = content[:limit]
		if len(reasoning) > limit {
			reasoning = reasoning[:limit]
		}
		return Reply{Content: content, FinishReason: "length", Reasoning: reasoning}
	}
	return Reply{Content: content, FinishReason: "stop", Reasoning: reasoning}
}

func fence(code string) string {
	return "Here is a Python program that computes the plan and prints it.\n\n```python\n" + code + "```\n"
}

// planProgram prints d.Moves.
func planProgram(d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "import json\n\n# Plan for %s, one move per line.\nplan = %s\n\n", d.Problem.Environment, pyList(d.Moves))
	b.WriteString("\ndef main():\n    print(\"moves = \" + json.dumps(plan))\n\n\nmain()\n")
	return b.String()
}

// crashProgram raises (an off-by-one KeyError) before printing.
func crashProgram(d Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "import json\n\n# Plan for %s, one move per line.\nplan = %s\n\n", d.Problem.Environment, pyList(d.Moves))
	b.WriteString("\ndef check(moves):\n    seen = {}\n    for i, move in enumerate(moves):\n        seen[i] = move\n" +
		"    return seen[len(moves)]\n\n\ncheck(plan)\nprint(\"moves = \" + json.dumps(plan))\n")
	return b.String()
}

// proseReply describes a few moves in words, with no program and no
// `moves =` line.
func proseReply(d Decision) string {
	var b strings.Builder
	b.WriteString("Let me think about this puzzle. A good strategy is to start with ")
	for i, m := range d.Moves {
		if i == 3 {
			break
		}
		if i > 0 {
			b.WriteString(", then ")
		}
		b.WriteString(string(m))
	}
	b.WriteString(", and continue in the same way until the goal is reached.\n")
	return b.String()
}

// truncatedReply checks the plan in prose at length and never reaches the
// program: it is cut at maxTokens.
func truncatedReply(d Decision, maxTokens int) string {
	limit := maxTokens*CharsPerToken + 1
	var b strings.Builder
	b.WriteString("Let me verify every move carefully before writing the program.\n")
	for pass := 1; b.Len() < limit; pass++ {
		for i, m := range d.Moves {
			fmt.Fprintf(&b, "Pass %d, step %d: the move %s keeps the state valid; next I check the following move.\n", pass, i+1, m)
			if b.Len() >= limit {
				break
			}
		}
		if len(d.Moves) == 0 {
			fmt.Fprintf(&b, "Pass %d: nothing to move yet, reconsidering the start state.\n", pass)
		}
	}
	return b.String()
}

// pyList renders JSON moves as a Python list literal, one move per line.
func pyList(moves []json.RawMessage) string {
	if len(moves) == 0 {
		return "[]"
	}
	var b strings.Builder
	b.WriteString("[\n")
	for _, m := range moves {
		b.WriteString("    ")
		b.WriteString(pyLiteral(m))
		b.WriteString(",\n")
	}
	b.WriteString("]")
	return b.String()
}

// pyLiteral renders a JSON value as a Python literal.
func pyLiteral(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "None"
	}
	var b strings.Builder
	writePy(&b, v)
	return b.String()
}

func writePy(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case json.Number:
		b.WriteString(x.String())
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(k))
			b.WriteString(": ")
			writePy(b, x[k])
		}
		b.WriteByte('}')
	}
}

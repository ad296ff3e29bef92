package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"repot.dev/repot-operator/contract"
)

// Parse recovers the machine-readable fields of a prompt built by Initial,
// Fresh or Repair, from the last user message. Labels are matched at the
// start of a line; in the stable part the last occurrence wins, so a
// problem statement that happens to contain such a line does not confuse it.
func Parse(msgs []contract.Message) (Parsed, error) {
	text := ""
	found := false
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == contract.RoleUser {
			text, found = msgs[i].Content, true
			break
		}
	}
	if !found {
		return Parsed{}, errors.New("prompt has no user message")
	}
	head, tail, isRepair := splitMarker(text)
	hl := labelled(head)
	var out Parsed
	var err error
	if out.Environment = hl[labelEnv]; out.Environment == "" {
		return Parsed{}, fmt.Errorf("prompt has no %q line", strings.TrimSpace(labelEnv))
	}
	// A Derail checkpoint problem stated as the paper does shows no
	// initial state: Initial stays nil.
	if _, ok := hl[labelInitial]; ok {
		if out.Initial, err = jsonLine(hl, labelInitial); err != nil {
			return Parsed{}, err
		}
	}
	if out.Goal, err = jsonLine(hl, labelGoal); err != nil {
		return Parsed{}, err
	}
	if out.MaxSteps, err = intLine(hl, labelMaxSteps, 0); err != nil {
		return Parsed{}, err
	}
	if out.Attempt, err = intLine(hl, labelAttempt, 1); err != nil {
		return Parsed{}, err
	}
	if !isRepair {
		return out, nil
	}
	r, err := parseRepair(labelled(tail))
	if err != nil {
		return Parsed{}, err
	}
	out.Repair = r
	return out, nil
}

func parseRepair(tl map[string]string) (*ParsedRepair, error) {
	var r ParsedRepair
	c := &r.Checkpoint
	var err error
	if _, ok := tl[labelVerified]; !ok {
		return nil, fmt.Errorf("repair prompt has no %q line", strings.TrimSpace(labelVerified))
	}
	if c.Verified, err = intLine(tl, labelVerified, 0); err != nil {
		return nil, err
	}
	if c.State, err = jsonLine(tl, labelState); err != nil {
		return nil, err
	}
	if c.LegalTotal, err = intLine(tl, labelLegalN, 0); err != nil {
		return nil, err
	}
	if c.Legal, err = listLine(tl, labelLegal); err != nil {
		return nil, err
	}
	c.Message = tl[labelMessage]
	_, hasTail := tl[labelTail]
	switch {
	case tl[labelFrom] == fromInitial:
		r.Variant = Restart
	case !hasTail:
		r.Variant = NoPrefix
	default:
		r.Variant = Standard
	}
	if hasTail {
		if c.Tail, err = listLine(tl, labelTail); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// splitMarker splits text at the Marker line.
func splitMarker(text string) (head, tail string, ok bool) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == Marker {
			return strings.Join(lines[:i], "\n"), strings.Join(lines[i+1:], "\n"), true
		}
	}
	return text, "", false
}

var labels = []string{labelEnv, labelInitial, labelGoal, labelMaxSteps, labelAttempt, labelVerified,
	labelTail, labelState, labelLegal, labelLegalN, labelMessage, labelFrom}

// labelled maps each problem label to the value of its last line in text.
func labelled(text string) map[string]string {
	return labelledLines(strings.Split(text, "\n"), labels)
}

// labelledLines maps each of lbs to the value of its last line in lines.
func labelledLines(lines, lbs []string) map[string]string {
	m := map[string]string{}
	for _, l := range lines {
		l = strings.TrimRight(l, "\r")
		for _, lb := range lbs {
			if strings.HasPrefix(l, lb) {
				m[lb] = strings.TrimSpace(l[len(lb):])
			}
		}
	}
	return m
}

// markedBlock splits the last user message of msgs at its last line that
// is marker: the problem's labelled lines above it (labelled), and the
// lines below it. ok is false when no line is the marker. The recovery,
// VEX chunk and step prompts are read through it.
func markedBlock(msgs []contract.Message, marker string) (head map[string]string, below []string, ok bool) {
	text := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == contract.RoleUser {
			text = msgs[i].Content
			break
		}
	}
	lines := strings.Split(text, "\n")
	at := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == marker {
			at = i
		}
	}
	if at < 0 {
		return nil, nil, false
	}
	return labelled(strings.Join(lines[:at], "\n")), lines[at+1:], true
}

func jsonLine(m map[string]string, label string) (json.RawMessage, error) {
	v, ok := m[label]
	if !ok {
		return nil, fmt.Errorf("prompt has no %q line", strings.TrimSpace(label))
	}
	if !json.Valid([]byte(v)) {
		return nil, fmt.Errorf("prompt line %q is not valid JSON", strings.TrimSpace(label))
	}
	return json.RawMessage(v), nil
}

func intLine(m map[string]string, label string, def int) (int, error) {
	v, ok := m[label]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("prompt line %q: %q is not a count", strings.TrimSpace(label), v)
	}
	return n, nil
}

func listLine(m map[string]string, label string) ([]json.RawMessage, error) {
	raw, err := jsonLine(m, label)
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("prompt line %q is not a JSON list: %v", strings.TrimSpace(label), err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

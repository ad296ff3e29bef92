package methods

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/contract/replay"
	"repot.dev/repot-operator/envs"
)

// JudgedCandidate is one judged candidate (contract.JudgedCandidate, as
// traces record it) with what the run needs of its replay.
type JudgedCandidate struct {
	contract.JudgedCandidate

	raw   []json.RawMessage
	state envs.State
	k     int
	kind  string
}

// Judgement is the verdict on a prompted reply (REPOT.md section 7).
type Judgement struct {
	// Candidates are the distinct candidates in order of first occurrence.
	Candidates []JudgedCandidate
	// Chosen indexes Candidates (-1 when there is none).
	Chosen int
	// Success reports whether any candidate reaches the goal.
	Success bool
}

// JudgeReply judges a prompted reply: every candidate move list
// (program.Candidates) is normalised and replayed from the checkpoint state;
// candidates equal after normalisation count once. A candidate reaches the
// goal only if every move is legal and the state after its last move is the
// goal. Success means some candidate does. The chosen candidate (it only
// decides what a failed run reports) is the first final candidate that
// reaches the goal, else the first that does, else the last final one; a
// candidate is final when it starts at or after the last final word
// (program.FinalMarker) or is the last one to start.
func JudgeReply(e envs.Env, p *envs.Problem, checkpoint, goal envs.State, reply string) Judgement {
	text := program.CleanReply(reply)
	cands := program.Candidates(reply)
	marker := program.FinalMarker(text)
	lastStart := -1
	for _, c := range cands {
		lastStart = max(lastStart, c.Start)
	}
	j := Judgement{Chosen: -1}
	index := map[string]int{}
	for _, c := range cands {
		final := c.Start == lastStart || (marker >= 0 && c.Start >= marker)
		jc, key := judgeCandidate(e, p, checkpoint, goal, c)
		if i, ok := index[key]; ok {
			j.Candidates[i].Final = j.Candidates[i].Final || final
			continue
		}
		jc.Final = final
		index[key] = len(j.Candidates)
		j.Candidates = append(j.Candidates, jc)
	}
	firstGoal, lastFinal := -1, -1
	for i, c := range j.Candidates {
		if c.ReachedGoal {
			j.Success = true
			if c.Final && (j.Chosen < 0 || !j.Candidates[j.Chosen].Final) {
				j.Chosen = i
			}
			if firstGoal < 0 {
				firstGoal = i
			}
		}
		if c.Final {
			lastFinal = i
		}
	}
	switch {
	case j.Chosen >= 0 && j.Candidates[j.Chosen].Final:
	case firstGoal >= 0:
		j.Chosen = firstGoal
	default:
		j.Chosen = lastFinal
	}
	return j
}

// judgeCandidate normalises and replays one candidate from the checkpoint
// without stopping at the goal, and returns it with its dedupe key: each
// move's normalised action as canonical JSON (an object move is taken as
// that action object, extra keys and all; a list or tuple goes through the
// environment's Normalize in the state reached so far).
func judgeCandidate(e envs.Env, p *envs.Problem, s, goal envs.State, c program.Candidate) (JudgedCandidate, string) {
	jc := JudgedCandidate{JudgedCandidate: contract.JudgedCandidate{Start: c.Start, Source: c.Source, Moves: len(c.Moves)}, raw: c.Moves, k: -1}
	var key strings.Builder
	failed := false
	for i, raw := range c.Moves {
		a, norm, err := normaliseMove(e, p, s, raw)
		key.WriteString(norm)
		key.WriteByte(0)
		if failed {
			continue
		}
		if err != nil {
			failed = true
			jc.k, jc.kind, jc.StopReason = i, contract.KindFormatError, contract.StopFormatError
			jc.Error = fmt.Sprintf("Move %d (%s) could not be read: %v", i+1, replay.Compact(raw), err)
			continue
		}
		st := e.Step(s, a)
		if !st.Valid {
			failed = true
			jc.k, jc.kind, jc.StopReason = i, string(st.Kind), contract.StopInvalidMove
			jc.Error = fmt.Sprintf("Move %d (%s) is invalid: %s", i+1, replay.Compact(raw), st.Message)
			continue
		}
		s = st.Next
		jc.Valid++
		if e.IsGoal(s, goal) && i < len(c.Moves)-1 && jc.StopReason == "" {
			// Remember the overshoot; a later move may still be invalid.
			jc.StopReason = contract.StopPastGoal
		}
	}
	jc.state = s
	switch {
	case failed:
	case e.IsGoal(s, goal):
		jc.ReachedGoal, jc.StopReason = true, contract.StopGoal
	case jc.StopReason == contract.StopPastGoal:
		jc.Error = fmt.Sprintf("The goal was reached before the last of the %d moves; the moves after it leave the goal.", len(c.Moves))
	default:
		jc.StopReason = contract.StopPlanExhausted
		jc.Error = fmt.Sprintf("All %d moves are valid, but the goal is not reached after them.", len(c.Moves))
	}
	return jc, key.String()
}

// normaliseMove returns a move's action and its canonical JSON: an object
// is decoded as the action object itself; anything else goes through
// Normalize. A move that cannot be read keeps its raw canonical JSON in the
// key, marked so that it never equals an action. An object the
// environment's strict decoding refuses (keys its actions lack, such as a
// "note", or no "type") is read as the reference reads a move dict: the
// other keys are ignored and the type is filled in (projectAction); its key
// keeps the object as written.
func normaliseMove(e envs.Env, p *envs.Problem, s envs.State, raw json.RawMessage) (envs.Action, string, error) {
	if firstNonBlank(raw) == '{' {
		canon := canonicalJSON(raw)
		a, err := e.DecodeAction(raw)
		if err != nil {
			// As the reference takes a move object as a dict: keys the
			// action does not have are ignored, and a missing type is
			// filled in.
			if b, ok := projectAction(e, s, raw); ok {
				if pa, perr := e.DecodeAction(b); perr == nil {
					return pa, canon, nil
				}
			}
			return nil, "!" + canon, fmt.Errorf("not an action of %s: %v", e.Name(), err)
		}
		return a, canon, nil
	}
	a, err := e.Normalize(p, s, raw)
	if err != nil {
		return nil, "!" + canonicalJSON(raw), err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, "!" + canonicalJSON(raw), err
	}
	return a, canonicalJSON(b), nil
}

func firstNonBlank(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

// canonicalJSON re-encodes JSON with sorted object keys (Go's encoder
// sorts map keys), or returns the compacted text when it does not decode.
func canonicalJSON(raw []byte) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	return strings.TrimSpace(string(raw))
}

// projectAction rewrites a move object to the keys the environment's actions
// have (those of its legal actions at s, as JSON), dropping the others; a
// missing "type" is taken from the legal action that agrees with the
// object's other keys, else from the legal actions when they all share one.
// ok is false when there is nothing to project against (no legal action)
// or the object does not decode.
func projectAction(e envs.Env, s envs.State, raw json.RawMessage) ([]byte, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, false
	}
	known := map[string]bool{}
	var legal []map[string]json.RawMessage
	for _, a := range e.Legal(s) {
		b, err := json.Marshal(a)
		if err != nil {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		legal = append(legal, m)
		for k := range m {
			known[k] = true
		}
	}
	if len(legal) == 0 {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for k, v := range obj {
		if known[k] {
			out[k] = v
		}
	}
	if _, ok := out["type"]; !ok && known["type"] {
		types := map[string]bool{}
		var match json.RawMessage
		for _, m := range legal {
			types[canonicalJSON(m["type"])] = true
			agrees := true
			for k, v := range out {
				if canonicalJSON(m[k]) != canonicalJSON(v) {
					agrees = false
					break
				}
			}
			if agrees && match == nil {
				match = m["type"]
			}
		}
		switch {
		case match != nil:
			out["type"] = match
		case len(types) == 1:
			for _, m := range legal {
				out["type"] = m["type"]
				break
			}
		}
	}
	b, err := json.Marshal(out)
	return b, err == nil
}

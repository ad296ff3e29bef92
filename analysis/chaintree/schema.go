package chaintree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Validate checks one JSONL line against the example schema
// (docs/chaintree.md): known fields only, every required field set, node
// ids 1..n along the prefix, and an action consistent with its node,
// content, reason and output.
func Validate(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var ex Example
	if err := dec.Decode(&ex); err != nil {
		return fmt.Errorf("chaintree example: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("chaintree example: data after the object")
	}
	var errs []error
	for _, f := range []struct{ name, v string }{{"key", ex.Key}, {"problem_id", ex.ProblemID}, {"environment", ex.Environment}, {"method", ex.Method}, {"output", ex.Output}} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("%s is empty", f.name))
		}
	}
	for _, f := range []struct {
		name string
		v    json.RawMessage
	}{{"initial", ex.Initial}, {"goal", ex.Goal}} {
		if len(f.v) == 0 || string(f.v) == "null" {
			errs = append(errs, fmt.Errorf("%s is missing", f.name))
		}
	}
	for i, n := range ex.Prefix {
		if n.ID != strconv.Itoa(i+1) {
			errs = append(errs, fmt.Errorf("prefix node %d has id %q, want %q", i, n.ID, strconv.Itoa(i+1)))
		}
		if len(n.Move) == 0 || !json.Valid(n.Move) {
			errs = append(errs, fmt.Errorf("prefix node %d has no move", i+1))
		}
	}
	switch ex.Action {
	case ActionContinue:
		want := strconv.Itoa(len(ex.Prefix) + 1)
		if ex.Node != want {
			errs = append(errs, fmt.Errorf("continue names node %q, want %q", ex.Node, want))
		}
		if len(ex.Content) == 0 || !json.Valid(ex.Content) {
			errs = append(errs, errors.New("continue has no content"))
		} else if ex.Output != ex.Node+" "+compact(ex.Content) {
			errs = append(errs, fmt.Errorf("continue output %q is not %q", ex.Output, ex.Node+" "+compact(ex.Content)))
		}
		if ex.Reason != "" || ex.Trace != "" {
			errs = append(errs, errors.New("continue has a reason or trace"))
		}
	case ActionAnswer:
		if ex.Node != "" || len(ex.Content) != 0 || ex.Reason != "" || ex.Trace != "" {
			errs = append(errs, errors.New("answer has a node, content, reason or trace"))
		}
		if ex.Output != AnswerToken {
			errs = append(errs, fmt.Errorf("answer output %q is not %q", ex.Output, AnswerToken))
		}
	case ActionBacktrack:
		n, err := strconv.Atoi(ex.Node)
		switch {
		case err != nil || strconv.Itoa(n) != ex.Node:
			errs = append(errs, fmt.Errorf("backtrack node %q is not a node id", ex.Node))
		case len(ex.Prefix) == 0 || n < 0 || n >= len(ex.Prefix):
			errs = append(errs, fmt.Errorf("backtrack to node %d is not before the failed node %d", n, len(ex.Prefix)))
		}
		if ex.Reason == "" || strings.ContainsAny(ex.Reason, "\n\r") {
			errs = append(errs, errors.New("backtrack reason is empty or not one line"))
		}
		if ex.Output != ex.Node+" "+ex.Reason {
			errs = append(errs, fmt.Errorf("backtrack output %q is not %q", ex.Output, ex.Node+" "+ex.Reason))
		}
		if len(ex.Content) != 0 {
			errs = append(errs, errors.New("backtrack has content"))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown action %q (want %s, %s or %s)", ex.Action, ActionContinue, ActionAnswer, ActionBacktrack))
	}
	if len(errs) > 0 {
		return fmt.Errorf("chaintree example %s: %w", ex.Key, errors.Join(errs...))
	}
	return nil
}

package envs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DerailCase is one Derail-550 recovery case: the problem's state after
// InjectionStep oracle moves (LastValidState), one injected action and the
// state it leads to. InjectedAction is kept raw: invalid-action probes such
// as {"type":"invalid_recovery_probe"} are not environment actions.
type DerailCase struct {
	CaseID         string          `json:"case_id"`
	Complexity     int             `json:"complexity"`
	Environment    string          `json:"environment"`
	InjectedAction json.RawMessage `json:"injected_action"`
	InjectedState  json.RawMessage `json:"injected_state"`
	InjectionStep  int             `json:"injection_step"`
	InjectionType  string          `json:"injection_type"`
	LastValidState json.RawMessage `json:"last_valid_state"`
	ProblemID      string          `json:"problem_id"`
}

// Validate checks the case's fields and that its states decode.
func (c *DerailCase) Validate() error {
	if c.CaseID == "" {
		return errors.New("missing case_id")
	}
	if c.ProblemID == "" {
		return fmt.Errorf("case %s: missing problem_id", c.CaseID)
	}
	e, err := Lookup(c.Environment)
	if err != nil {
		return fmt.Errorf("case %s: %v", c.CaseID, err)
	}
	if c.InjectionStep < 0 {
		return fmt.Errorf("case %s: negative injection_step", c.CaseID)
	}
	if _, err := e.DecodeState(c.LastValidState); err != nil {
		return fmt.Errorf("case %s: last_valid_state: %v", c.CaseID, err)
	}
	if _, err := e.DecodeState(c.InjectedState); err != nil {
		return fmt.Errorf("case %s: injected_state: %v", c.CaseID, err)
	}
	if len(c.InjectedAction) == 0 {
		return fmt.Errorf("case %s: missing injected_action", c.CaseID)
	}
	return nil
}

// LoadDerailReader reads Derail JSONL. It returns the well-formed cases and,
// when any line is malformed, a *LoadError listing each bad line.
func LoadDerailReader(r io.Reader, source string) ([]DerailCase, error) {
	var out []DerailCase
	le := &LoadError{Source: source}
	seen := map[string]int{}
	err := eachLine(r, func(n int, line []byte) {
		var c DerailCase
		if err := decodeLine(line, &c); err != nil {
			le.Lines = append(le.Lines, LineError{n, "not a derail case object: " + err.Error()})
			return
		}
		if err := c.Validate(); err != nil {
			le.Lines = append(le.Lines, LineError{n, err.Error()})
			return
		}
		if first, dup := seen[c.CaseID]; dup {
			le.Lines = append(le.Lines, LineError{n, fmt.Sprintf("duplicate case_id %q (first on line %d)", c.CaseID, first)})
			return
		}
		seen[c.CaseID] = n
		out = append(out, c)
	})
	if err != nil {
		le.Lines = append(le.Lines, LineError{0, err.Error()})
	}
	if len(le.Lines) > 0 {
		return out, le
	}
	return out, nil
}

// LoadDerail reads the Derail JSONL file at a path or URL.
func LoadDerail(path string) ([]DerailCase, error) {
	f, err := openSource(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadDerailReader(f, path)
}

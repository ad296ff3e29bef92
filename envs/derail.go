package envs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
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
	return loadJSONL(r, source, "derail case", func(c *DerailCase) (string, error) {
		if err := c.Validate(); err != nil {
			return "", err
		}
		return "case_id " + strconv.Quote(c.CaseID), nil
	})
}

// LoadDerail reads the Derail JSONL file at a path or URL.
func LoadDerail(path string) ([]DerailCase, error) {
	return loadSource(path, func(r io.Reader) ([]DerailCase, error) { return LoadDerailReader(r, path) })
}

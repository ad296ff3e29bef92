package envs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// LineError is one malformed line of a JSONL file.
type LineError struct {
	Line   int
	Reason string
}

// Error renders "line N: reason".
func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// LoadError lists every malformed line of a JSONL input.
type LoadError struct {
	Source string
	Lines  []LineError
}

// Error names the source and lists the first 20 bad lines, one per line.
func (e *LoadError) Error() string {
	var b strings.Builder
	src := e.Source
	if src == "" {
		src = "input"
	}
	fmt.Fprintf(&b, "%s: %d malformed line(s)", src, len(e.Lines))
	for i, l := range e.Lines {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Lines)-20)
			break
		}
		fmt.Fprintf(&b, "\n  %s", l.Error())
	}
	return b.String()
}

// maxLine bounds one JSONL line (a Hanoi problem with 10 disks is ~100 KB).
const maxLine = 64 << 20

// eachLine calls f for every non-blank line with its 1-based number. A read
// error (a line over maxLine bytes, a broken connection) is returned as a
// LineError naming the line that could not be read.
func eachLine(r io.Reader, f func(n int, line []byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		f(n, line)
	}
	if err := sc.Err(); err != nil {
		return LineError{Line: n + 1, Reason: "cannot read: " + err.Error()}
	}
	return nil
}

func decodeLine(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// LoadProblems reads problems in the PuzzleZoo JSONL schema. It returns the
// well-formed problems and, when any line is malformed, a *LoadError that
// lists every bad line with its number and the reason.
func LoadProblems(r io.Reader) ([]Problem, error) {
	return loadProblems(r, "", "")
}

func loadProblems(r io.Reader, source, wantEnv string) ([]Problem, error) {
	return loadJSONL(r, source, "problem", func(p *Problem) (string, error) {
		if err := p.Validate(); err != nil {
			return "", err
		}
		if wantEnv != "" && p.Environment != wantEnv {
			return "", fmt.Errorf("environment %q, want %q", p.Environment, wantEnv)
		}
		return "problem_id " + strconv.Quote(p.ProblemID), nil
	})
}

// loadJSONL decodes one T per non-blank line and checks it with check,
// which returns the record's identity (for duplicate detection) or why it
// is malformed. It returns the well-formed records and, when any line is
// malformed, a *LoadError that lists every bad line with its number.
func loadJSONL[T any](r io.Reader, source, what string, check func(*T) (string, error)) ([]T, error) {
	var out []T
	le := &LoadError{Source: source}
	seen := map[string]int{}
	err := eachLine(r, func(n int, line []byte) {
		var v T
		if err := decodeLine(line, &v); err != nil {
			le.Lines = append(le.Lines, LineError{n, "not a " + what + " object: " + err.Error()})
			return
		}
		id, err := check(&v)
		if err != nil {
			le.Lines = append(le.Lines, LineError{n, err.Error()})
			return
		}
		if first, dup := seen[id]; dup {
			le.Lines = append(le.Lines, LineError{n, fmt.Sprintf("duplicate %s (first on line %d)", id, first)})
			return
		}
		seen[id] = n
		out = append(out, v)
	})
	var lineErr LineError
	if errors.As(err, &lineErr) {
		le.Lines = append(le.Lines, lineErr)
	} else if err != nil {
		le.Lines = append(le.Lines, LineError{0, err.Error()})
	}
	if len(le.Lines) > 0 {
		return out, le
	}
	return out, nil
}

// Validate checks that the problem names a known environment and that its
// states and oracle actions decode.
func (p *Problem) Validate() error {
	if p.ProblemID == "" {
		return errors.New("missing problem_id")
	}
	e, err := Lookup(p.Environment)
	if err != nil {
		return fmt.Errorf("problem %s: %v", p.ProblemID, err)
	}
	if len(p.InitialState) == 0 || string(p.InitialState) == "null" {
		return fmt.Errorf("problem %s: missing initial_state", p.ProblemID)
	}
	if _, err := e.DecodeState(p.InitialState); err != nil {
		return fmt.Errorf("problem %s: initial_state: %v", p.ProblemID, err)
	}
	if len(p.GoalState) == 0 || string(p.GoalState) == "null" {
		return fmt.Errorf("problem %s: missing goal_state", p.ProblemID)
	}
	if _, err := e.DecodeState(p.GoalState); err != nil {
		return fmt.Errorf("problem %s: goal_state: %v", p.ProblemID, err)
	}
	for i, a := range p.OracleSolution {
		if _, err := e.DecodeAction(a); err != nil {
			return fmt.Errorf("problem %s: oracle_solution[%d]: %v", p.ProblemID, i, err)
		}
	}
	if p.MinSteps < 0 || p.MaxSteps < 0 {
		return fmt.Errorf("problem %s: negative min_steps or max_steps", p.ProblemID)
	}
	return nil
}

// openSource opens a local path or an http(s) URL.
func openSource(path string) (io.ReadCloser, error) {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		c := &http.Client{Timeout: 2 * time.Minute}
		resp, err := c.Get(path)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return resp.Body, nil
	}
	return os.Open(path)
}

// loadSource opens a path or URL and hands it to load.
func loadSource[T any](path string, load func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := openSource(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return load(f)
}

// LoadProblemsFile reads a PuzzleZoo-schema JSONL file from a path or URL.
func LoadProblemsFile(path string) ([]Problem, error) {
	return loadSource(path, func(r io.Reader) ([]Problem, error) { return loadProblems(r, path, "") })
}

// LoadPlanBench reads the PlanBench Blocksworld JSONL (path or URL); every
// record must be a blocksworld_pddl problem.
func LoadPlanBench(path string) ([]Problem, error) {
	return loadSource(path, func(r io.Reader) ([]Problem, error) { return loadProblems(r, path, PDDLName) })
}

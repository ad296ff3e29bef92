package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"repot.dev/repot-operator/runner/summary"
)

// maxLine bounds one JSONL line of records.jsonl.
const maxLine = 1 << 20

// ReadRecords reads records JSONL. Blank lines are skipped. A last line
// without its newline that does not parse is a run cut off mid-write: it is
// left out and reported through partial (its byte length), so the caller can
// cut it off before appending. Any other bad line is an error naming its line
// number.
func ReadRecords(r io.Reader) (recs []summary.Record, partial int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("records line %d: %w", n, err)
		}
		complete := len(line) > 0 && line[len(line)-1] == '\n'
		if len(line) > maxLine {
			return nil, 0, fmt.Errorf("records line %d: longer than %d bytes", n, maxLine)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var rec summary.Record
			if uerr := json.Unmarshal(t, &rec); uerr != nil {
				if !complete {
					return recs, len(line), nil
				}
				return nil, 0, fmt.Errorf("records line %d: %v", n, uerr)
			}
			if rec.Model == "" || rec.ProblemID == "" || rec.Method == "" {
				return nil, 0, fmt.Errorf("records line %d: record lacks model, problem_id or method", n)
			}
			recs = append(recs, rec)
		}
		if err == io.EOF {
			return recs, 0, nil
		}
	}
}

// DoneKeys returns the keys of the records a resume skips: every key with a
// record that is not an infra error.
func DoneKeys(recs []summary.Record) map[string]bool {
	done := make(map[string]bool, len(recs))
	for _, r := range recs {
		if r.InfraError == "" {
			done[r.Key()] = true
		}
	}
	return done
}

// writeJSONLine writes v as one JSON line.
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

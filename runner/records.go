package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"repot.dev/repot-operator/runner/summary"
)

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
		if len(line) > summary.MaxRecordLine {
			return nil, 0, fmt.Errorf("records line %d: longer than %d bytes", n, summary.MaxRecordLine)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			rec, perr := summary.ParseRecord(t)
			if perr != nil && !complete && !json.Valid(t) {
				return recs, len(line), nil // a run cut off mid-write
			}
			if perr != nil {
				return nil, 0, fmt.Errorf("records line %d: %v", n, perr)
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

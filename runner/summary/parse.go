package summary

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxRecordLine bounds one JSONL line of records, in records.jsonl and in a
// ledger alike (a record is about 500 bytes; a ledger holds at most 1 MiB).
const MaxRecordLine = 1 << 20

// errNoKey is the error of a record that could not be keyed.
var errNoKey = errors.New("record lacks model, problem_id or method")

// ParseRecord parses one JSONL line into a record. A line without a model,
// problem_id or method is an error: it could not be keyed. It is the one
// parser of records: the runner's resume, the ledger sidecar, the operator
// and the schedule controller all read records through it.
func ParseRecord(line []byte) (Record, error) {
	var r Record
	if len(line) > MaxRecordLine {
		return r, fmt.Errorf("longer than %d bytes", MaxRecordLine)
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, err
	}
	if r.Model == "" || r.ProblemID == "" || r.Method == "" {
		return r, errNoKey
	}
	return r, nil
}

// ScanRecords calls fn with each non-blank line of records JSONL text (its
// 1-based number, the trimmed line, and the record or the error of
// ParseRecord), in order.
func ScanRecords(text string, fn func(line int, raw string, rec Record, err error)) {
	n := 0
	for l := range strings.Lines(text) {
		n++
		raw := strings.TrimSpace(l)
		if raw == "" {
			continue
		}
		rec, err := ParseRecord([]byte(raw))
		fn(n, raw, rec, err)
	}
}

// Supersedes reports whether rec replaces kept, a record of the same key
// met before it: a finished run replaces an infra error, and otherwise the
// first record stays. It is the one rule of deduplication (Dedupe, and the
// ledger's merge).
func Supersedes(kept, rec Record) bool { return rec.InfraError == "" && kept.InfraError != "" }

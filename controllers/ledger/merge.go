// Package ledger keeps a runner shard's ledger: a ConfigMap whose data key
// records.jsonl holds one summary.Record per line. `repot ledger restore`
// copies the ledger into the runner's records file before `repot run
// --resume` starts; `repot ledger sync` tails that file and merges new
// records into the ConfigMap in small batches and once more on SIGTERM.
// Merging is by record key, so a record written twice is stored once.
package ledger

import (
	"encoding/json"
	"fmt"
	"strings"

	"repot.dev/repot-operator/runner/summary"
)

// LineError is a line of records text that is not a record.
type LineError struct {
	Source string // file or ConfigMap name
	Line   int    // 1-based
	Err    string
}

func (e LineError) Error() string { return fmt.Sprintf("%s line %d: %s", e.Source, e.Line, e.Err) }

// entry is one line of a ledger: a record, or a line kept verbatim because
// it could not be parsed (the ledger never loses what it held).
type entry struct {
	raw string
	rec summary.Record
	ok  bool
}

// Merge adds records to the ledger text existing and returns the new text
// and how many of the given records changed it. Each key is stored once,
// with the rule of summary.Dedupe: the first record that is not an infra
// error wins, and an infra error is replaced by a later finished run of the
// same key. Existing lines keep their order; new keys are appended.
func Merge(existing string, add []summary.Record) (merged string, added int) {
	var entries []entry
	idx := map[string]int{}
	insert := func(e entry) bool {
		if !e.ok {
			entries = append(entries, e)
			return true
		}
		k := e.rec.Key()
		i, seen := idx[k]
		switch {
		case !seen:
			idx[k] = len(entries)
			entries = append(entries, e)
			return true
		case summary.Supersedes(entries[i].rec, e.rec):
			entries[i] = e
			return true
		}
		return false
	}
	summary.ScanRecords(existing, func(_ int, raw string, r summary.Record, err error) {
		insert(entry{raw: raw, rec: r, ok: err == nil})
	})
	for _, r := range add {
		if insert(entry{rec: r, ok: true}) {
			added++
		}
	}
	var b strings.Builder
	for _, e := range entries {
		if e.ok {
			line, err := json.Marshal(e.rec)
			if err != nil { // a Record always marshals; keep the raw text if not
				line = []byte(e.raw)
			}
			b.Write(line)
		} else {
			b.WriteString(e.raw)
		}
		b.WriteByte('\n')
	}
	return b.String(), added
}

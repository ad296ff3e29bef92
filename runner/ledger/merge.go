// Package ledger keeps a runner shard's ledger: a ConfigMap whose data key
// records.jsonl holds one contract.Record per line. `repot ledger restore`
// copies the ledger into the runner's records file before `repot run
// --resume` starts; `repot ledger sync` tails that file and merges new
// records into the ConfigMap in small batches and once more on SIGTERM.
// Merging is by record key, so a record written twice is stored once.
package ledger

import (
	"encoding/json"
	"fmt"
	"strings"

	"repot.dev/repot-operator/contract"
)

// LineError is a line of records text that is not a record.
type LineError struct {
	Source string // file or ConfigMap name
	Line   int    // 1-based
	Err    string
}

func (e LineError) Error() string { return fmt.Sprintf("%s line %d: %s", e.Source, e.Line, e.Err) }

// entry is one line of a ledger: a record, or a line kept verbatim because
// it could not be parsed (the ledger never loses what it held). line is the
// text it is written as.
type entry struct {
	line string
	rec  contract.Record
	ok   bool
}

// recordsText is a ledger's records text, parsed for merging: one entry per
// key, with the rule of contract.Supersedes. size is the length of the text
// String writes.
type recordsText struct {
	entries []entry
	idx     map[string]int
	size    int
}

// parseRecordsText parses a ledger's records text. Valid records are
// re-encoded; other lines are kept as they are.
func parseRecordsText(existing string) *recordsText {
	t := &recordsText{idx: map[string]int{}}
	contract.ScanRecords(existing, func(_ int, raw string, r contract.Record, err error) {
		if err != nil {
			t.entries = append(t.entries, entry{line: raw})
			t.size += len(raw) + 1
			return
		}
		t.put(r, -1)
	})
	return t
}

// putResult says what put did with a record.
type putResult int

const (
	putHeld     putResult = iota // its key is stored with a record it does not supersede
	putAdded                     // a new key, appended
	putReplaced                  // it superseded the stored record of its key
	putNoRoom                    // it would take the text past the limit
)

// put merges one record. limit bounds the text's size in bytes; -1 means
// none.
func (t *recordsText) put(r contract.Record, limit int) putResult {
	b, err := json.Marshal(r)
	if err != nil { // a Record always marshals
		return putHeld
	}
	line := string(b)
	k := r.Key()
	i, seen := t.idx[k]
	switch {
	case !seen:
		if limit >= 0 && t.size+len(line)+1 > limit {
			return putNoRoom
		}
		t.idx[k] = len(t.entries)
		t.entries = append(t.entries, entry{line: line, rec: r, ok: true})
		t.size += len(line) + 1
		return putAdded
	case contract.Supersedes(t.entries[i].rec, r):
		delta := len(line) - len(t.entries[i].line)
		if limit >= 0 && t.size+delta > limit {
			return putNoRoom
		}
		t.entries[i] = entry{line: line, rec: r, ok: true}
		t.size += delta
		return putReplaced
	}
	return putHeld
}

func (t *recordsText) String() string {
	var b strings.Builder
	b.Grow(t.size)
	for _, e := range t.entries {
		b.WriteString(e.line)
		b.WriteByte('\n')
	}
	return b.String()
}

// Merge adds records to the ledger text existing and returns the new text
// and how many of the given records changed it. Each key is stored once,
// with the rule of summary.Dedupe: the first record that is not an infra
// error wins, and an infra error is replaced by a later finished run of the
// same key. Existing lines keep their order; new keys are appended.
func Merge(existing string, add []contract.Record) (merged string, added int) {
	t := parseRecordsText(existing)
	for _, r := range add {
		if res := t.put(r, -1); res == putAdded || res == putReplaced {
			added++
		}
	}
	return t.String(), added
}

// mergeWithin merges add into existing as far as the text stays within
// limit bytes: it returns the new text, how many records changed it, and
// the records that did not fit, in their order. A record whose key the
// text already holds (and that does not supersede it) is stored already.
func mergeWithin(existing string, add []contract.Record, limit int) (merged string, added int, left []contract.Record) {
	t := parseRecordsText(existing)
	for _, r := range add {
		switch t.put(r, limit) {
		case putAdded, putReplaced:
			added++
		case putNoRoom:
			left = append(left, r)
		}
	}
	return t.String(), added, left
}

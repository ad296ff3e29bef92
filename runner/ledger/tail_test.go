package ledger

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.jsonl")
	tl := &Tail{Path: path}
	a, b, c := rec("p1", "pot", true, ""), rec("p2", "pot", false, ""), rec("p3", "pot", true, "")

	next := func(wantRecs []contract.Record, wantBad []LineError) {
		t.Helper()
		got, bad, err := tl.Next()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantRecs, got); diff != "" {
			t.Errorf("records (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantBad, bad); diff != "" {
			t.Errorf("bad lines (-want +got):\n%s", diff)
		}
	}

	next(nil, nil) // no file yet
	appendFile(t, path, jsonl(t, a))
	next([]contract.Record{a}, nil)
	next(nil, nil) // nothing new

	// A half-written line is not read until its newline arrives.
	full := jsonl(t, b)
	appendFile(t, path, full[:10])
	next(nil, nil)
	appendFile(t, path, full[10:]+"garbage\n")
	next([]contract.Record{b}, []LineError{{Source: path, Line: 3, Err: "invalid character 'g' looking for beginning of value"}})

	// A rewritten (shorter) file is read again from the top.
	if err := os.WriteFile(path, []byte(jsonl(t, c)), 0o644); err != nil {
		t.Fatal(err)
	}
	next([]contract.Record{c}, nil)
}

package repot

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{args: []string{"manager", "--leader-elect"}},
		{args: []string{"ledger", "sync", "--configmap", "l-0", "--spills", "2"}},
		{args: []string{"ledger", "sync", "--spills", "two"}, wantErr: "invalid argument"},
		{args: []string{"run", "--suite", "open-source-120"}},
		{args: nil, wantErr: "no subcommand"},
		{args: []string{"no-such-command"}, wantErr: "unknown command"},
		{args: []string{"run", "--no-such-flag"}, wantErr: "unknown flag"},
	} {
		err := ParseArgs(tc.args)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ParseArgs(%q) = %v; want nil", tc.args, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("ParseArgs(%q) = %v; want an error containing %q", tc.args, err, tc.wantErr)
		}
	}
}

func TestRunReportsErrors(t *testing.T) {
	var stderr bytes.Buffer
	if code := Run([]string{"suite", "list", "--no-such-flag"}, &stderr); code != 1 {
		t.Errorf("exit code %d; want 1", code)
	}
	if !strings.HasPrefix(stderr.String(), "repot: ") {
		t.Errorf("stderr %q; want it to start with repot: ", stderr.String())
	}
}

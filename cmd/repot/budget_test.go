package repot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repot.dev/repot-operator/contract"
)

// `repot run` reads its budget cap from DIR/budget-cap.json: none without
// the file, the file's cap with it; an unreadable cap is said once.
func TestRunReadsTheBudgetCap(t *testing.T) {
	dir := t.TempDir()
	var errw bytes.Buffer
	a := budgetAllowance(dir, 512, &errw)
	if a.CallTokens != 512 {
		t.Errorf("a call reserves %d tokens, want --max-tokens 512", a.CallTokens)
	}
	if c, err := a.Read(); err != nil || !c.IsZero() {
		t.Errorf("without the file: %v, %v; want no cap", c, err)
	}
	path := filepath.Join(dir, contract.BudgetCapFile)
	if err := os.WriteFile(path, []byte(`{"completionTokens":900}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := a.Read(); err != nil || c.CompletionTokens == nil || *c.CompletionTokens != 900 {
		t.Errorf("with the file: %v, %v; want a cap of 900 tokens", c, err)
	}
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := a.Read()
	if err == nil {
		t.Fatal("a cap file that does not parse was read")
	}
	a.OnReadError(err)
	a.OnReadError(err)
	a.OnWait("waiting for the budget: x")
	if got := errw.String(); strings.Count(got, "budget cap") != 1 || !strings.Contains(got, "budget: waiting for the budget: x\n") {
		t.Errorf("said:\n%s\nwant the read error once and the wait", got)
	}
}

package ledger

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"repot.dev/repot-operator/contract"
)

// setCap sets (or, with "", removes) the ledger's budget cap annotation as
// the operator's merge patch would.
func (f *fakeConfigMaps) setCap(name, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cm := f.objs[name]
	if value == "" {
		delete(cm.Annotations, contract.LedgerBudgetCapAnnotation)
		return
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[contract.LedgerBudgetCapAnnotation] = value
}

// readCap is the cap file's content, "" when there is none.
func readCap(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The sidecar copies the ledger's budget cap to the cap file on its first
// poll and, reading the ledger every CapEvery, each change of it; a removed
// cap removes the file, and a cap that does not parse leaves it.
func TestSyncCopiesTheBudgetCap(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	capFile := filepath.Join(dir, contract.BudgetCapFile)
	fake := newFake("led-0", "")
	fake.setCap("led-0", `{"completionTokens":100}`)
	s := &Syncer{Store: &Store{Client: fake, Name: "led-0"}, Tail: &Tail{Path: filepath.Join(dir, contract.RecordsFile)},
		Poll: time.Second, CapFile: capFile, CapEvery: 2 * time.Second}
	run := runSyncer(t, s, clock)
	poll := run.poll
	steps := []struct {
		name string
		set  string // the annotation before the poll ("-": unchanged, "": removed)
		want string
	}{
		{"first poll", "-", `{"completionTokens":100}` + "\n"},
		{"changed, read after CapEvery only", `{"completionTokens":250}`, `{"completionTokens":100}` + "\n"},
		{"CapEvery later", "-", `{"completionTokens":250}` + "\n"},
		{"not a cap", "not json", `{"completionTokens":250}` + "\n"},
		{"not a cap, read", "-", `{"completionTokens":250}` + "\n"},
		{"removed", "", `{"completionTokens":250}` + "\n"},
		{"removed, read", "-", ""},
	}
	for i, st := range steps {
		if st.set != "-" {
			fake.setCap("led-0", st.set)
		}
		poll()
		if got := readCap(t, capFile); got != st.want {
			t.Errorf("poll %d (%s): cap file %q, want %q", i+1, st.name, got, st.want)
		}
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
}

// Restore writes the ledger's cap beside the records, and no file when the
// ledger has none.
func TestRestoreWritesTheBudgetCap(t *testing.T) {
	for _, tc := range []struct {
		name, cap, want string
	}{
		{"a cap", `{"modelCalls":7}`, `{"modelCalls":7}` + "\n"},
		{"none", "", ""},
	} {
		dir := t.TempDir()
		capFile := filepath.Join(dir, contract.BudgetCapFile)
		if err := os.WriteFile(capFile, []byte(`{"modelCalls":1}`), 0o644); err != nil { // a stale file
			t.Fatal(err)
		}
		fake := newFake("led-0", "")
		fake.setCap("led-0", tc.cap)
		if _, err := Restore(context.Background(), &Store{Client: fake, Name: "led-0"}, filepath.Join(dir, contract.RecordsFile)); err != nil {
			t.Fatal(err)
		}
		if got := readCap(t, capFile); got != tc.want {
			t.Errorf("%s: cap file %q, want %q", tc.name, got, tc.want)
		}
	}
}

package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/envs/shareddata"
)

func TestSuiteListOpenSource120MatchesPublishedIDs(t *testing.T) {
	want, err := os.ReadFile(shareddata.Require(t, "open_source_120_ids.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := execute(t, "suite", "list", "open-source-120")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Fields(string(want)), strings.Fields(got)); diff != "" {
		t.Errorf("ids (-published +ours):\n%s", diff)
	}
}

func TestSuiteExportPuzzleZooMatchesPublished(t *testing.T) {
	published := readJSONL(t, shareddata.Require(t, "puzzlezoo_775.jsonl"))
	out, err := execute(t, "suite", "export", "puzzlezoo-775")
	if err != nil {
		t.Fatal(err)
	}
	ours := readLines(t, strings.NewReader(out))
	if len(ours) != len(published) {
		t.Fatalf("exported %d problems, published %d", len(ours), len(published))
	}
	for i := range ours {
		for _, skip := range []string{"natural_language_prompt", "metadata", "oracle_solution"} {
			delete(ours[i], skip)
			delete(published[i], skip)
		}
		if diff := cmp.Diff(published[i], ours[i]); diff != "" {
			t.Fatalf("problem %d (-published +ours):\n%s", i, diff)
		}
	}
}

func TestSuiteListNeedsANameOrFile(t *testing.T) {
	_, err := execute(t, "suite", "list")
	if err == nil || !strings.Contains(err.Error(), "open-source-120") {
		t.Fatalf("err = %v, want one that names the suites", err)
	}
}

func TestVerifyConformanceAgreesWithEveryRecordedTransition(t *testing.T) {
	path := shareddata.Require(t, "verifier_conformance.jsonl")
	out, err := execute(t, "verify", "--conformance", path)
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	if !strings.Contains(out, "agree 12674/12674") {
		t.Errorf("output lacks agree 12674/12674:\n%s", out)
	}
}

// A conformance file with one altered transition must be reported as a
// disagreement, with the command failing.
func TestVerifyConformanceReportsADisagreement(t *testing.T) {
	src := shareddata.Require(t, "verifier_conformance.jsonl")
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 0; n < 50 && sc.Scan(); n++ {
		line := sc.Text()
		if n == 0 {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			rec["valid"] = !rec["valid"].(bool)
			bs, _ := json.Marshal(rec)
			line = string(bs)
		}
		b.WriteString(line + "\n")
	}
	conf := filepath.Join(dir, "verifier_conformance.jsonl")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execute(t, "verify", "--conformance", conf, "--planbench", shareddata.Require(t, "planbench_blocksworld.jsonl"))
	if err == nil {
		t.Fatalf("verify succeeded on an altered file:\n%s", out)
	}
	if !strings.Contains(out, "agree 49/50") {
		t.Errorf("output lacks agree 49/50:\n%s", out)
	}
}

func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readLines(t, f)
}

func readLines(t *testing.T, r interface{ Read([]byte) (int, error) }) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

package repot

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repot.dev/repot-operator/envs/shareddata"
)

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
	// The disagreement is listed with its line and what differed.
	if !strings.Contains(out, "line 1 (tower_of_hanoi, apple_hanoi_n03_seed0000_template00): valid: want false, got true") {
		t.Errorf("output does not list the disagreement on line 1:\n%s", out)
	}
}

func TestVerifyConformanceEmptyFileFails(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(conf, []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execute(t, "verify", "--conformance", conf)
	if err == nil || !strings.Contains(err.Error(), "no transitions") {
		t.Errorf("err = %v, want one saying the file holds no transitions", err)
	}
	if !strings.Contains(out, "agree 0/0") {
		t.Errorf("output lacks agree 0/0:\n%s", out)
	}
}

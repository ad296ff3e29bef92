package repot

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

func TestSuiteExportDerailSaysWhy(t *testing.T) {
	_, err := execute(t, "suite", "export", "derail-550", "--problems", "unused.jsonl")
	if err == nil || !strings.Contains(err.Error(), "recovery cases") {
		t.Fatalf("err = %v, want one that explains derail-550 holds cases", err)
	}
}

func TestSuiteListAndExportFromFile(t *testing.T) {
	dir := t.TempDir()
	good := `{"complexity":1,"environment":"checker_jumping","goal_state":{"board":"B_R","left_piece":"R","right_piece":"B"},"initial_state":{"board":"R_B","left_piece":"R","right_piece":"B"},"max_steps":13,"min_steps":3,"natural_language_prompt":"p","oracle_solution":[],"problem_id":"p1"}`
	file := filepath.Join(dir, "problems.jsonl")
	if err := os.WriteFile(file, []byte(good+"\n"+strings.Replace(good, `"p1"`, `"p2"`, 1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := execute(t, "suite", "list", "--problems", file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("p1\np2\n", out); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	out, err = execute(t, "suite", "export", "--problems", file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(good+"\n"+strings.Replace(good, `"p1"`, `"p2"`, 1)+"\n", out); diff != "" {
		t.Errorf("export (-want +got):\n%s", diff)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(good+"\n{oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := execute(t, "suite", "list", "--problems", bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want one naming line 2", err)
	}
}

package chaintree

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"repot.dev/repot-operator/runner"
)

// TestExportRunTraces exports the traces.jsonl files named in
// REPOT_CHAINTREE_TRACES (comma-separated; skipped when unset), checks every
// example against the schema and logs the counts by kind. The measurement
// of docs/vrr.md writes such files (REPOT_VRR_OUT).
//
//	REPOT_CHAINTREE_TRACES=/tmp/vrrout/repotR3/traces.jsonl go test -run TestExportRunTraces -v ./runner/chaintree/
func TestExportRunTraces(t *testing.T) {
	paths := os.Getenv("REPOT_CHAINTREE_TRACES")
	if paths == "" {
		t.Skip("REPOT_CHAINTREE_TRACES not set")
	}
	for _, path := range strings.Split(paths, ",") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var traces []runner.Trace
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var tr runner.Trace
			if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			traces = append(traces, tr)
		}
		var out bytes.Buffer
		counts, err := Export(&out, traces, Options{Trace: true, Completable: SolverCompletable})
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
			if err := Validate(line); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
		t.Logf("%s: %d traces -> %+v", path, len(traces), counts)
	}
}

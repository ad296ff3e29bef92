package chaintree

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestExportRunTraces exports the traces.jsonl files named in
// REPOT_CHAINTREE_TRACES (comma-separated; skipped when unset), checks every
// example against the schema and logs the counts by kind. The measurement
// of docs/vrr.md writes such files (REPOT_VRR_OUT).
//
//	REPOT_CHAINTREE_TRACES=/tmp/vrrout/repotR3/traces.jsonl go test -run TestExportRunTraces -v ./analysis/chaintree/
func TestExportRunTraces(t *testing.T) {
	paths := os.Getenv("REPOT_CHAINTREE_TRACES")
	if paths == "" {
		t.Skip("REPOT_CHAINTREE_TRACES not set")
	}
	for _, path := range strings.Split(paths, ",") {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		counts, err := ExportJSONL(&out, f, Options{Trace: true, Completable: SolverCompletable})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
			if err := Validate(line); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
		t.Logf("%s: %+v", path, counts)
	}
}

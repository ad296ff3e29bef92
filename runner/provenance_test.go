package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/contract"
)

func TestProvenanceFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := contract.Provenance{RepotVersion: "v1", ServedModels: []contract.ServedModel{{ID: "m", MaxModelLen: ptr.To[int64](8)}},
		Request: map[string]json.RawMessage{"temperature": json.RawMessage("0")}, SystemPrefix: "/no_think"}
	if err := contract.WriteProvenance(dir, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, contract.ProvenanceFile))
	if err != nil {
		t.Fatal(err)
	}
	got, err := contract.ParseProvenance(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}
	big := contract.Provenance{ServerError: strings.Repeat("x", contract.MaxProvenanceBytes)}
	if err := contract.WriteProvenance(dir, big); err == nil {
		t.Error("an oversized provenance was written")
	}
	if _, err := contract.ParseProvenance([]byte("{")); err == nil {
		t.Error("a cut-off file parsed")
	}
}

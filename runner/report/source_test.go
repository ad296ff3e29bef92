package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/runner/layout"
)

// An exported directory's source.json carries the GPU use the records do
// not, so a report of the export shows the same sections as the live one.
func TestSourceFileCarriesEnergy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, layout.RecordsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := []ModelEnergy{{Model: "a", GPUSeconds: 60, Joules: 42000, Solved: 2, Simulated: true}}
	b, err := json.Marshal(SourceMeta{Name: "ns/ev", Origin: OriginExported, Energy: want})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SourceFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := loadRunDir(dir, "fallback", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s.Energy); diff != "" {
		t.Errorf("energy (-want +got):\n%s", diff)
	}
}

package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"repot.dev/repot-operator/runner/layout"
	"repot.dev/repot-operator/runner/model"
)

// MaxProvenanceBytes bounds a provenance file as written and as read.
const MaxProvenanceBytes = 8 << 10

// Provenance is what a run ran with, as the engine saw it: its own build,
// what the server said of itself and the request parameters it sends.
type Provenance struct {
	// RepotVersion and RepotCommit are the binary's build (BuildVersion).
	RepotVersion string `json:"repot_version,omitempty"`
	RepotCommit  string `json:"repot_commit,omitempty"`
	// ServedModels is the server's /v1/models; ServerError says why it
	// could not be read.
	ServedModels []model.ServedModel `json:"served_models,omitempty"`
	ServerError  string              `json:"server_error,omitempty"`
	// Request holds the top-level request fields sent with every call
	// other than the model and the messages (model.OpenAI.RequestParameters).
	Request map[string]json.RawMessage `json:"request,omitempty"`
	// SystemPrefix is the prefix put before the system prompt.
	SystemPrefix string `json:"system_prefix,omitempty"`
}

// linkedVersion and linkedRevision are set at link time, e.g. by the
// Dockerfile from its VERSION and REVISION build arguments (-ldflags "-X
// repot.dev/repot-operator/runner.linkedVersion=..."): an image build has no
// .git to stamp VCS information from.
var (
	linkedVersion  string
	linkedRevision string
)

// BuildVersion is the repot binary's version and the VCS revision it was
// built from: the values set at link time when there are, else
// runtime/debug.ReadBuildInfo's module version ("(devel)" for a source
// build) and vcs.revision (with "-dirty" when the tree had changes; "" when
// the build recorded none).
func BuildVersion() (version, commit string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	version, commit = buildVersion(bi)
	if linkedVersion != "" {
		version = linkedVersion
	}
	if linkedRevision != "" {
		commit = linkedRevision
	}
	return version, commit
}

func buildVersion(bi *debug.BuildInfo) (version, commit string) {
	version = bi.Main.Version
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit != "" && dirty {
		commit += "-dirty"
	}
	return version, commit
}

// WriteProvenance writes p to dir/layout.ProvenanceFile.
func WriteProvenance(dir string, p Provenance) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encoding the provenance: %w", err)
	}
	if len(b) > MaxProvenanceBytes {
		return fmt.Errorf("the provenance is %d bytes, more than %d", len(b), MaxProvenanceBytes)
	}
	if err := os.WriteFile(filepath.Join(dir, layout.ProvenanceFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the provenance: %w", err)
	}
	return nil
}

// ParseProvenance reads a provenance file's content.
func ParseProvenance(b []byte) (Provenance, error) {
	var p Provenance
	if len(b) > MaxProvenanceBytes {
		return p, fmt.Errorf("provenance of %d bytes is over the %d-byte bound", len(b), MaxProvenanceBytes)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("reading the provenance: %w", err)
	}
	return p, nil
}

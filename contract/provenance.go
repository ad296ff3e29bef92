package contract

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// MaxProvenanceBytes bounds a provenance file as written and as read.
const MaxProvenanceBytes = 8 << 10

// Provenance is what a run ran with, as the engine saw it: its own build,
// what the server said of itself and the request parameters it sends.
type Provenance struct {
	// RepotVersion and RepotCommit are the binary's build (buildinfo.Version).
	RepotVersion string `json:"repot_version,omitempty"`
	RepotCommit  string `json:"repot_commit,omitempty"`
	// ServedModels is the server's /v1/models; ServerError says why it
	// could not be read.
	ServedModels []ServedModel `json:"served_models,omitempty"`
	ServerError  string        `json:"server_error,omitempty"`
	// Request holds the top-level request fields sent with every call
	// other than the model and the messages (model.OpenAI.RequestParameters).
	Request map[string]json.RawMessage `json:"request,omitempty"`
	// SystemPrefix is the prefix put before the system prompt.
	SystemPrefix string `json:"system_prefix,omitempty"`
}

// ServedModel is one model a server lists on /v1/models: its id and what
// vLLM adds of it (root, max_model_len); servers that do not say leave them
// empty.
type ServedModel struct {
	ID          string `json:"id"`
	Root        string `json:"root,omitempty"`
	MaxModelLen *int64 `json:"max_model_len,omitempty"`
}

// Describe is how reports and exports show a served model: "ID[, root
// ROOT][, max_model_len N]".
func (s ServedModel) Describe() string {
	v := s.ID
	if s.Root != "" {
		v += ", root " + s.Root
	}
	if s.MaxModelLen != nil {
		v += fmt.Sprintf(", max_model_len %d", *s.MaxModelLen)
	}
	return v
}

// WriteProvenance writes p to dir/ProvenanceFile.
func WriteProvenance(dir string, p Provenance) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encoding the provenance: %w", err)
	}
	if len(b) > MaxProvenanceBytes {
		return fmt.Errorf("the provenance is %d bytes, more than %d", len(b), MaxProvenanceBytes)
	}
	if err := os.WriteFile(filepath.Join(dir, ProvenanceFile), append(b, '\n'), 0o644); err != nil {
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

package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/contract"
)

// maxModeBytes bounds what is copied from the file.
const maxModeBytes = 512

// Annotator sets an annotation on the ledger; *Store is the real one.
type Annotator interface {
	Annotate(ctx context.Context, key, value string) error
}

// Annotate sets one annotation on the ledger ConfigMap (a merge patch).
func (s *Store) Annotate(ctx context.Context, key, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	if err != nil {
		return err
	}
	if _, err := s.Client.Patch(ctx, s.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "repot-ledger"}); err != nil {
		return fmt.Errorf("annotating ledger ConfigMap %s: %w", s.Name, err)
	}
	return nil
}

// readMode returns the mode in path, or "" when the file is not there yet.
func readMode(path string) (string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if len(b) > maxModeBytes {
		b = b[:maxModeBytes]
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), "?")), nil
}

// syncMode copies the mode file onto the ledger once, when it appears and
// the store can be annotated.
func (s *Syncer) syncMode(ctx context.Context) {
	if s.ModeFile == "" || s.modeDone {
		return
	}
	a, ok := s.Store.(Annotator)
	if !ok {
		s.modeDone = true
		return
	}
	mode, err := readMode(s.ModeFile)
	if err != nil {
		s.Logf("ledger: reading %s: %v", s.ModeFile, err)
		return
	}
	if mode == "" {
		return
	}
	if err := a.Annotate(ctx, contract.LedgerSandboxModeAnnotation, mode); err != nil {
		s.Logf("ledger: %v (will retry)", err)
		return
	}
	s.modeDone = true
}

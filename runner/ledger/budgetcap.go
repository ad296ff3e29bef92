package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"repot.dev/repot-operator/contract"
)

// AnnotationReader reads an annotation of the ledger; *Store is the real
// one.
type AnnotationReader interface {
	// ReadAnnotation returns the annotation's value and whether the ledger
	// has it.
	ReadAnnotation(ctx context.Context, key string) (string, bool, error)
}

// ReadAnnotation reads one annotation of the ledger ConfigMap.
func (s *Store) ReadAnnotation(ctx context.Context, key string) (string, bool, error) {
	cm, err := s.Client.Get(ctx, s.Name, metav1.GetOptions{})
	if err != nil {
		return "", false, fmt.Errorf("reading ledger ConfigMap %s: %w", s.Name, err)
	}
	v, ok := cm.Annotations[key]
	return v, ok, nil
}

// DefaultCapEvery is how often `ledger sync` reads the ledger's budget cap.
const DefaultCapEvery = 5 * time.Second

// writeBudgetCap makes path hold the budget cap value (the ledger's
// contract.LedgerBudgetCapAnnotation): the value when present, no file when
// absent (no cap). A value that is no cap is an error, and the file is left
// as it was.
func writeBudgetCap(path, value string, present bool) error {
	if !present {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if _, err := contract.ParseBudgetCap(value); err != nil {
		return err
	}
	return writeAtomic(path, []byte(value+"\n"))
}

// restoreBudgetCap writes the ledger's budget cap to path (writeBudgetCap).
func restoreBudgetCap(ctx context.Context, s *Store, path string) error {
	v, ok, err := s.ReadAnnotation(ctx, contract.LedgerBudgetCapAnnotation)
	if err != nil {
		return err
	}
	return writeBudgetCap(path, v, ok)
}

// syncCap copies the ledger's budget cap to CapFile when it changed, reading
// the ledger at most every CapEvery. A failed read or write is logged and
// tried again on a later poll.
func (s *Syncer) syncCap(ctx context.Context) {
	if s.CapFile == "" {
		return
	}
	r, ok := s.Store.(AnnotationReader)
	if !ok {
		return
	}
	every := s.CapEvery
	if every <= 0 {
		every = DefaultCapEvery
	}
	if !s.capRead.IsZero() && s.Clock.Since(s.capRead) < every {
		return
	}
	s.capRead = s.Clock.Now()
	v, present, err := r.ReadAnnotation(ctx, contract.LedgerBudgetCapAnnotation)
	if err != nil {
		s.Logf("ledger: budget cap: %v (will retry)", err)
		return
	}
	if s.capSynced && v == s.capValue && present == s.capPresent {
		return
	}
	if err := writeBudgetCap(s.CapFile, v, present); err != nil {
		s.Logf("ledger: budget cap: writing %s: %v (will retry)", s.CapFile, err)
		return
	}
	s.capSynced, s.capValue, s.capPresent = true, v, present
}

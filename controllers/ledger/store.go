package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/runner/layout"
	"repot.dev/repot-operator/runner/summary"
)

// MaxLedgerBytes bounds the records text of one ledger. A ConfigMap holds at
// most 1 MiB in all; the rest is left for metadata. A shard whose records do
// not fit needs more shards (spec.runner.shardsPerModel).
const MaxLedgerBytes = 1000 * 1000

// ErrLedgerFull is the cause of a Merge that would take the ledger past
// MaxLedgerBytes. Retrying the same records cannot succeed.
var ErrLedgerFull = errors.New("ledger full")

// ConfigMapClient is the part of the typed ConfigMap client the ledger uses;
// client-go's CoreV1().ConfigMaps(ns) satisfies it.
type ConfigMapClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.ConfigMap, error)
}

// Store is one ledger ConfigMap. It only reads and patches the object: the
// operator creates it, and the runner's Role allows get and patch on it by
// name only.
type Store struct {
	Client ConfigMapClient
	Name   string
	// MaxConflicts bounds retries after a write conflict; 0 means 10.
	MaxConflicts int
}

// Load returns the ledger's records text.
func (s *Store) Load(ctx context.Context) (string, error) {
	cm, err := s.Client.Get(ctx, s.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading ledger ConfigMap %s: %w", s.Name, err)
	}
	return cm.Data[layout.LedgerRecordsKey], nil
}

// Merge merges records into the ledger and returns how many changed it. It
// reads the object, merges by key and patches data.records.jsonl with the
// read resourceVersion, so a concurrent writer is never overwritten: on a
// conflict it reads again and retries. Nothing is written when the records
// are already there.
func (s *Store) Merge(ctx context.Context, recs []summary.Record) (int, error) {
	return s.mergeKey(ctx, layout.LedgerRecordsKey, func(old string) (string, int) { return Merge(old, recs) })
}

// mergeKey is the one read-merge-patch loop of the ledger's data keys:
// merge gives the key's new text (and how many entries it added) from its
// current text. The patch carries the resourceVersion read, so a
// concurrent writer is never overwritten; a conflict reads again, up to
// MaxConflicts times. The whole ConfigMap's data (every key) must stay
// within MaxLedgerBytes.
func (s *Store) mergeKey(ctx context.Context, key string, merge func(old string) (string, int)) (int, error) {
	limit := s.MaxConflicts
	if limit <= 0 {
		limit = 10
	}
	for attempt := 0; ; attempt++ {
		cm, err := s.Client.Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return 0, fmt.Errorf("reading ledger ConfigMap %s: %w", s.Name, err)
		}
		old := cm.Data[key]
		merged, added := merge(old)
		if merged == old {
			return 0, nil
		}
		size := len(merged)
		for k, v := range cm.Data {
			if k != key {
				size += len(v)
			}
		}
		if size > MaxLedgerBytes {
			return 0, fmt.Errorf("%w: ledger ConfigMap %s would hold %d bytes of records and GPU readings, more than %d: give the evaluation more shards (spec.runner.shardsPerModel)", ErrLedgerFull, s.Name, size, MaxLedgerBytes)
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": cm.ResourceVersion},
			"data":     map[string]string{key: merged},
		})
		if err != nil {
			return 0, err
		}
		_, err = s.Client.Patch(ctx, s.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "repot-ledger"})
		if err == nil {
			return added, nil
		}
		if !apierrors.IsConflict(err) || attempt+1 >= limit {
			return 0, fmt.Errorf("writing ledger ConfigMap %s: %w", s.Name, err)
		}
	}
}

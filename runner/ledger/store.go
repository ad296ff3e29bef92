package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/contract"
)

// ErrLedgerFull is the cause of a Merge whose records do not all fit in
// the ledger and its spill ConfigMaps (FullError says which are left).
// Retrying the same records cannot succeed.
var ErrLedgerFull = errors.New("ledger full")

// FullError is the error of a Merge that stored some records but not Left:
// the ledger and every spill ConfigMap after it are full. Merge stored the
// others; nothing of Left is in the ledger.
type FullError struct {
	Ledger string // the last ConfigMap of the chain
	Spills int
	Left   []contract.Record
}

func (e *FullError) Error() string {
	return fmt.Sprintf("%v: %d records do not fit in ledger ConfigMap %s and its %d spill ConfigMaps (%d bytes each at most): give the evaluation more shards (spec.runner.shardsPerModel)",
		ErrLedgerFull, len(e.Left), e.Ledger, e.Spills, contract.MaxLedgerBytes)
}

func (e *FullError) Unwrap() error { return ErrLedgerFull }

// ConfigMapClient is the part of the typed ConfigMap client the ledger uses;
// client-go's CoreV1().ConfigMaps(ns) satisfies it.
type ConfigMapClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.ConfigMap, error)
}

// Store is one ledger: the ConfigMap Name and its Spills spill ConfigMaps
// (contract.LedgerSpillName). It only reads and patches them: the operator creates them,
// and the runner's Role allows get and patch on them by name only.
type Store struct {
	Client ConfigMapClient
	Name   string
	// Spills is the number of spill ConfigMaps after Name; 0 means none.
	Spills int
	// MaxConflicts bounds retries after a write conflict; 0 means 10.
	MaxConflicts int
}

// Names are the ConfigMaps of the ledger in order: Name, then its spills.
func (s *Store) Names() []string { return contract.LedgerNames(s.Name, s.Spills) }

// Load returns the records text of the ledger and its spills, one after
// the other.
func (s *Store) Load(ctx context.Context) (string, error) {
	var b strings.Builder
	for _, name := range s.Names() {
		cm, err := s.Client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("reading ledger ConfigMap %s: %w", name, err)
		}
		text := cm.Data[contract.LedgerRecordsKey]
		b.WriteString(text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

// Merge merges records into the ledger and returns how many changed it.
// Each ConfigMap of the chain (Names) in turn takes what fits of the
// records not stored yet: it is read, merged by key and patched with the
// read resourceVersion, so a concurrent writer is never overwritten (a
// conflict reads again and retries). A record whose key a ConfigMap holds
// already is stored. Nothing is written where nothing changes, and nothing
// is dropped: records that fit nowhere come back in a *FullError.
func (s *Store) Merge(ctx context.Context, recs []contract.Record) (int, error) {
	rest := recs
	added := 0
	for _, name := range s.Names() {
		if len(rest) == 0 {
			break
		}
		var left []contract.Record
		n, err := s.mergeKey(ctx, name, contract.LedgerRecordsKey, func(old string, room int) (string, int, error) {
			merged, n, l := mergeWithin(old, rest, room)
			if len(merged) > room { // the other keys grew past the room: spill all
				left = rest
				return old, 0, nil
			}
			left = l
			return merged, n, nil
		})
		added += n
		if err != nil {
			return added, err
		}
		rest = left
	}
	if len(rest) > 0 {
		names := s.Names()
		return added, &FullError{Ledger: names[len(names)-1], Spills: s.Spills, Left: rest}
	}
	return added, nil
}

// mergeKey is the one read-merge-patch loop of the ledger's data keys:
// merge gives the key's new text (and how many entries it added) from its
// current text and the room the key may take (contract.MaxLedgerBytes less the
// ConfigMap's other keys). The patch carries the resourceVersion read, so
// a concurrent writer is never overwritten; a conflict reads again, up to
// MaxConflicts times. The whole ConfigMap's data (every key) must stay
// within contract.MaxLedgerBytes.
func (s *Store) mergeKey(ctx context.Context, name, key string, merge func(old string, room int) (string, int, error)) (int, error) {
	limit := s.MaxConflicts
	if limit <= 0 {
		limit = 10
	}
	for attempt := 0; ; attempt++ {
		cm, err := s.Client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return 0, fmt.Errorf("reading ledger ConfigMap %s: %w", name, err)
		}
		old := cm.Data[key]
		room := contract.MaxLedgerBytes
		for k, v := range cm.Data {
			if k != key {
				room -= len(v)
			}
		}
		merged, added, err := merge(old, room)
		if err != nil {
			return 0, err
		}
		if merged == old {
			return 0, nil
		}
		if len(merged) > room {
			return 0, fmt.Errorf("%w: ledger ConfigMap %s would hold %d bytes of records and GPU readings, more than %d: give the evaluation more shards (spec.runner.shardsPerModel)", ErrLedgerFull, name, len(merged)+contract.MaxLedgerBytes-room, contract.MaxLedgerBytes)
		}
		patch, err := json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": cm.ResourceVersion},
			"data":     map[string]string{key: merged},
		})
		if err != nil {
			return 0, err
		}
		_, err = s.Client.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "repot-ledger"})
		if err == nil {
			return added, nil
		}
		if !apierrors.IsConflict(err) || attempt+1 >= limit {
			return 0, fmt.Errorf("writing ledger ConfigMap %s: %w", name, err)
		}
	}
}

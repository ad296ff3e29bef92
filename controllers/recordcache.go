package controllers

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/runner/summary"
)

// recordCache keeps the parsed records of each ledger ConfigMap by its
// resourceVersion, so a reconcile re-parses only the ledgers that changed.
// It holds only the ledgers the last reconcile of each evaluation saw.
type recordCache struct {
	mu    sync.Mutex
	evals map[types.NamespacedName]map[string]parsedLedger
}

type parsedLedger struct {
	resourceVersion string
	records         []summary.Record
	problems        []ledgerProblem
}

func namespacedName(e interface {
	GetNamespace() string
	GetName() string
}) types.NamespacedName {
	return types.NamespacedName{Namespace: e.GetNamespace(), Name: e.GetName()}
}

func newRecordCache() *recordCache {
	return &recordCache{evals: map[types.NamespacedName]map[string]parsedLedger{}}
}

// read returns the records of the ledgers in readLedgers' order.
func (c *recordCache) read(eval types.NamespacedName, ledgers []corev1.ConfigMap) ([]summary.Record, []ledgerProblem) {
	c.mu.Lock()
	old := c.evals[eval]
	c.mu.Unlock()
	next := make(map[string]parsedLedger, len(ledgers))
	ordered := append([]corev1.ConfigMap(nil), ledgers...)
	sortLedgers(ordered)
	var recs []summary.Record
	var problems []ledgerProblem
	for i := range ordered {
		cm := &ordered[i]
		pl, ok := old[cm.Name]
		if !ok || pl.resourceVersion != cm.ResourceVersion || cm.ResourceVersion == "" {
			r, p := parseLedger(cm.Name, cm.Data[LedgerDataKey])
			pl = parsedLedger{resourceVersion: cm.ResourceVersion, records: r, problems: p}
		}
		next[cm.Name] = pl
		recs = append(recs, pl.records...)
		problems = append(problems, pl.problems...)
	}
	c.mu.Lock()
	c.evals[eval] = next
	c.mu.Unlock()
	return recs, problems
}

// forget drops an evaluation's entries (it was deleted).
func (c *recordCache) forget(eval types.NamespacedName) {
	c.mu.Lock()
	delete(c.evals, eval)
	c.mu.Unlock()
}

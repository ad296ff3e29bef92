package planning

import (
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// RecordCache keeps the parsed records of each ledger ConfigMap by its
// resourceVersion, so a reconcile re-parses only the ledgers that changed.
// It holds only the ledgers the last reconcile of each evaluation saw.
type RecordCache struct {
	mu    sync.Mutex
	evals map[types.NamespacedName]map[string]parsedLedger
	// memo holds each evaluation's last aggregated results with the key
	// (generation and ledger resourceVersions) they were computed for.
	memo map[types.NamespacedName]memoResults
}

type memoResults struct {
	key     string
	results EvaluationResults
}

type parsedLedger struct {
	resourceVersion string
	records         []contract.Record
	problems        []ledgerProblem
}

// NamespacedName is the namespace and name of an object.
func NamespacedName(e interface {
	GetNamespace() string
	GetName() string
}) types.NamespacedName {
	return types.NamespacedName{Namespace: e.GetNamespace(), Name: e.GetName()}
}

// NewRecordCache is an empty RecordCache.
func NewRecordCache() *RecordCache {
	return &RecordCache{evals: map[types.NamespacedName]map[string]parsedLedger{}, memo: map[types.NamespacedName]memoResults{}}
}

// Read returns the records of the ledgers in readLedgers' order.
func (c *RecordCache) Read(eval types.NamespacedName, ledgers []corev1.ConfigMap) ([]contract.Record, []ledgerProblem) {
	c.mu.Lock()
	old := c.evals[eval]
	c.mu.Unlock()
	next := make(map[string]parsedLedger, len(ledgers))
	ordered := append([]corev1.ConfigMap(nil), ledgers...)
	sortLedgers(ordered)
	var recs []contract.Record
	var problems []ledgerProblem
	for i := range ordered {
		cm := &ordered[i]
		pl, ok := old[cm.Name]
		if !ok || pl.resourceVersion != cm.ResourceVersion || cm.ResourceVersion == "" {
			r, p := parseLedger(cm.Name, cm.Labels[build.LabelModel], cm.Data[contract.LedgerRecordsKey])
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

// RecordsOf returns the records of each ledger of the evaluation's last
// Read, by ledger name (nil for a ledger it did not read).
func (c *RecordCache) RecordsOf(eval types.NamespacedName) func(ledger string) []contract.Record {
	c.mu.Lock()
	ledgers := c.evals[eval]
	c.mu.Unlock()
	return func(name string) []contract.Record { return ledgers[name].records }
}

// Forget drops an evaluation's entries (it was deleted).
func (c *RecordCache) Forget(eval types.NamespacedName) {
	c.mu.Lock()
	delete(c.evals, eval)
	delete(c.memo, eval)
	c.mu.Unlock()
}

// Results returns compute(), recomputed only when key changed since the
// evaluation's last call. Aggregating the records is most of a reconcile's
// CPU, and most reconciles (a server became ready, a Job started) change no
// ledger. The results are shared between passes and must not be modified.
// An empty key (a ledger without resourceVersion) is never memoized.
func (c *RecordCache) Results(eval types.NamespacedName, key string, compute func() EvaluationResults) EvaluationResults {
	c.mu.Lock()
	m, ok := c.memo[eval]
	c.mu.Unlock()
	if ok && key != "" && m.key == key {
		return m.results
	}
	res := compute()
	if key != "" {
		c.mu.Lock()
		c.memo[eval] = memoResults{key: key, results: res}
		c.mu.Unlock()
	}
	return res
}

// ResultsKey identifies what the results of an evaluation depend on: its
// generation (models and methods) and each ledger's resourceVersion; ""
// when a ledger has none.
func ResultsKey(generation int64, ledgers []corev1.ConfigMap) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(generation, 10))
	ordered := append([]corev1.ConfigMap(nil), ledgers...)
	sortLedgers(ordered)
	for i := range ordered {
		if ordered[i].ResourceVersion == "" {
			return ""
		}
		b.WriteString("/" + ordered[i].Name + "@" + ordered[i].ResourceVersion)
	}
	return b.String()
}

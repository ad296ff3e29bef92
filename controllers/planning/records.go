package planning

import (
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// ledgerProblem is a line of a ledger that could not be read. It is logged
// by the reconciler, never fatal: the other lines still count.
type ledgerProblem struct {
	Ledger string
	Line   int
	Err    string
}

func (p ledgerProblem) String() string {
	return fmt.Sprintf("ledger %s line %d: %s", p.Ledger, p.Line, p.Err)
}

// ReadLedgers returns the records of the given ledger ConfigMaps (a shard's
// ledger and its spill ConfigMaps alike) in a fixed order (by model label,
// then shard index, then spill index, then line), whatever order the
// cache listed them in, so that summary.Dedupe always keeps the same record
// of a duplicated key. A record whose model is not the ledger's (its model
// label, which ExpectedLedgers derives from the ledger's name) is not
// read: a ledger holds the runs of its own model alone, and its runner
// could otherwise record runs of another. Such records and unreadable
// lines are returned as problems. It is recordCache.read without a cache:
// the reconciler reads through the cache, and the tests through this.
func ReadLedgers(ledgers []corev1.ConfigMap) ([]contract.Record, []ledgerProblem) {
	return NewRecordCache().Read(types.NamespacedName{}, ledgers)
}

// sortLedgers orders ledgers by model label, then shard index, then spill
// index, then name.
func sortLedgers(ls []corev1.ConfigMap) {
	sort.Slice(ls, func(i, j int) bool { return ledgerLess(&ls[i], &ls[j]) })
}

func ledgerLess(a, b *corev1.ConfigMap) bool {
	ma, mb := a.Labels[build.LabelModel], b.Labels[build.LabelModel]
	if ma != mb {
		return ma < mb
	}
	sa, ea := strconv.Atoi(a.Labels[build.LabelShard])
	sb, eb := strconv.Atoi(b.Labels[build.LabelShard])
	if ea == nil && eb == nil && sa != sb {
		return sa < sb
	}
	// A shard's ledger, then its spills in order (a main ledger has no
	// spill label: 0).
	pa, _ := strconv.Atoi(a.Labels[build.LabelSpill])
	pb, _ := strconv.Atoi(b.Labels[build.LabelSpill])
	if pa != pb {
		return pa < pb
	}
	return a.Name < b.Name
}

// parseLedger parses one ledger's JSONL text. Blank lines are skipped; a line
// that is not a record with a model, a problem id and a method is a problem
// (a partly written last line is one too, and is picked up once complete),
// and so is a record of another model than model, the ledger's.
func parseLedger(name, model, text string) ([]contract.Record, []ledgerProblem) {
	var recs []contract.Record
	var problems []ledgerProblem
	contract.ScanRecords(text, func(line int, _ string, r contract.Record, err error) {
		if err == nil && r.Model != model {
			err = fmt.Errorf("a record of model %q in a ledger of model %q", Truncate(r.Model, 64), model)
		}
		if err != nil {
			problems = append(problems, ledgerProblem{Ledger: name, Line: line, Err: err.Error()})
			return
		}
		recs = append(recs, r)
	})
	return recs, problems
}

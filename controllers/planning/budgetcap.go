package planning

import (
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// CapShard is a running shard of a model, as BudgetCaps sees it.
type CapShard struct {
	// Model is the shard's model, a name of BudgetCaps' models.
	Model string
	// Recorded is what the shard's ledger records (summary.Spent of its
	// records: its runs and aborted attempts).
	Recorded Spend
	// Stored is the cap its ledger holds (contract.LedgerBudgetCapAnnotation);
	// nil when it holds none.
	Stored *contract.BudgetCap
}

// capKind is one kind of spending a cap bounds: a limit of a budget, the
// spending it counts and the cap's field.
type capKind struct {
	limit func(*repotv1.BudgetLimits) *int64
	spent func(Spend) int64
	field func(*contract.BudgetCap) **int64
}

var capKinds = []capKind{
	{
		limit: func(l *repotv1.BudgetLimits) *int64 { return l.MaxCompletionTokens },
		spent: func(s Spend) int64 { return s.CompletionTokens },
		field: func(c *contract.BudgetCap) **int64 { return &c.CompletionTokens },
	},
	{
		limit: func(l *repotv1.BudgetLimits) *int64 { return l.MaxModelCalls },
		spent: func(s Spend) int64 { return s.ModelCalls },
		field: func(c *contract.BudgetCap) **int64 { return &c.ModelCalls },
	},
}

// BudgetCaps computes the cap of each running shard (shards, in their
// order) from the budget b and what each model spent (models: every model
// of the evaluation, running or not), and says whether the caps the
// shards' ledgers hold must be replaced by them.
//
// A model's remaining budget, per limit of completion tokens or model
// calls, is the least of its perModel limit less what it spent, and its
// share of the evaluation's limit less what all models spent, split evenly
// over the running models (those with shards; a remainder to the first in
// order). It is split evenly over the model's running shards the same way,
// and a shard's cap is what its ledger records plus its share: the caps of
// one computation together allow no more than the remaining budget. A kind
// no limit covers is not capped.
//
// Caps are cumulative, so a set of caps stays safe as the shards spend, and
// rewriting them at each record would only churn the ledgers: the stored
// caps are replaced (refresh) when a shard lacks its cap or holds caps of
// other kinds, when together they allow more than a limit has left (the
// limit was lowered, or the set is mixed), or when a shard has less than
// half its new share left (it is about to wait).
func BudgetCaps(b *repotv1.BudgetSpec, models []ModelSpend, shards []CapShard) (caps []contract.BudgetCap, refresh bool) {
	caps = make([]contract.BudgetCap, len(shards))
	if len(shards) == 0 {
		return caps, false
	}
	byModel := map[string][]int{}
	for i := range shards {
		byModel[shards[i].Model] = append(byModel[shards[i].Model], i)
	}
	var running []int
	for i := range models {
		if len(byModel[models[i].Name]) > 0 {
			running = append(running, i)
		}
	}
	for _, k := range capKinds {
		if b != nil && k.capShards(b, models, running, byModel, shards, caps) {
			refresh = true
		}
	}
	for i := range shards {
		s := shards[i].Stored
		if s == nil {
			refresh = refresh || !caps[i].IsZero()
			continue
		}
		for _, k := range capKinds {
			stored, fresh := *k.field(s), *k.field(&caps[i])
			switch {
			case (stored == nil) != (fresh == nil):
				refresh = true
			case stored != nil && 2*(*stored-k.spent(shards[i].Recorded)) < *fresh-k.spent(shards[i].Recorded):
				refresh = true // running low
			}
		}
	}
	return caps, refresh
}

// capShards sets kind k's caps of the running models' shards and says
// whether the stored caps allow more than a limit has left.
func (k capKind) capShards(b *repotv1.BudgetSpec, models []ModelSpend, running []int, byModel map[string][]int, shards []CapShard, caps []contract.BudgetCap) (unsafe bool) {
	var total int64
	for i := range models {
		total += k.spent(models[i].Spend)
	}
	// storedLeft is what the stored caps of some shards still allow.
	storedLeft := func(idx []int) int64 {
		var n int64
		for _, i := range idx {
			if s := shards[i].Stored; s != nil && *k.field(s) != nil {
				n += max(**k.field(s)-k.spent(shards[i].Recorded), 0)
			}
		}
		return n
	}
	evalLimit := k.limit(&b.BudgetLimits)
	if evalLimit != nil {
		var all []int
		for _, mi := range running {
			all = append(all, byModel[models[mi].Name]...)
		}
		unsafe = storedLeft(all) > max(*evalLimit-total, 0)
	}
	for ri, mi := range running {
		m := &models[mi]
		left := int64(-1) // no limit
		if evalLimit != nil {
			left = splitShare(max(*evalLimit-total, 0), len(running), ri)
		}
		idx := byModel[m.Name]
		for j := range b.PerModel {
			pm := &b.PerModel[j]
			if pm.Model != m.Name || k.limit(&pm.BudgetLimits) == nil {
				continue
			}
			r := max(*k.limit(&pm.BudgetLimits)-k.spent(m.Spend), 0)
			if left < 0 || r < left {
				left = r
			}
			unsafe = unsafe || storedLeft(idx) > r
		}
		if left < 0 {
			continue
		}
		for p, si := range idx {
			v := k.spent(shards[si].Recorded) + splitShare(left, len(idx), p)
			*k.field(&caps[si]) = &v
		}
	}
	return unsafe
}

// splitShare is the p-th of n even shares of x (the remainder to the first
// ones).
func splitShare(x int64, n, p int) int64 {
	s := x / int64(n)
	if int64(p) < x%int64(n) {
		s++
	}
	return s
}

// ShardSpending is, per model (by its ledgers' model label) and shard
// index, what the shard's ledgers record (summary.Spent of their records).
// recordsOf gives a ledger's records by name (RecordCache.RecordsOf).
func ShardSpending(ledgers []corev1.ConfigMap, recordsOf func(ledger string) []contract.Record) map[string]map[int]Spend {
	recs := map[string]map[int][]contract.Record{}
	for i := range ledgers {
		l := &ledgers[i]
		shard, err := strconv.Atoi(l.Labels[build.LabelShard])
		if err != nil {
			continue
		}
		m := l.Labels[build.LabelModel]
		if recs[m] == nil {
			recs[m] = map[int][]contract.Record{}
		}
		recs[m][shard] = append(recs[m][shard], recordsOf(l.Name)...)
	}
	out := map[string]map[int]Spend{}
	for m, shards := range recs {
		out[m] = map[int]Spend{}
		for s, rs := range shards {
			var sp Spend
			for _, v := range summary.Spent(rs) {
				sp.CompletionTokens += v.CompletionTokens
				sp.ModelCalls += v.Calls
			}
			out[m][s] = sp
		}
	}
	return out
}

// shardSpending is w.ShardSpend, or ShardSpending of w's ledgers when the
// snapshot did not set it.
func (w *World) shardSpending() map[string]map[int]Spend {
	if w.ShardSpend != nil {
		return w.ShardSpend
	}
	parsed := map[string][]contract.Record{}
	for i := range w.Ledgers {
		parsed[w.Ledgers[i].Name], _ = parseLedger(w.Ledgers[i].Name, w.Ledgers[i].Labels[build.LabelModel], w.Ledgers[i].Data[contract.LedgerRecordsKey])
	}
	return ShardSpending(w.Ledgers, func(name string) []contract.Record { return parsed[name] })
}

// planBudgetCaps writes the budget caps of the running shards on their
// ledgers (contract.LedgerBudgetCapAnnotation) when BudgetCaps says the
// stored ones are to be replaced: the ledger sidecars hand them to the
// runners, which admit no model call their cap cannot cover. A running
// shard is one of a model not done nor stopped by the budget whose runner
// Job runs (or is created by this plan) and has not completed the shard's
// index.
func (p *Plan) planBudgetCaps(e *repotv1.RepotEvaluation, w *World, spend []ModelSpend, models []modelState) {
	var shards []CapShard
	var ledgers []*corev1.ConfigMap
	var recorded map[string]map[int]Spend
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		if i >= len(models) || models[i].OverBudget || models[i].Done {
			continue
		}
		j := w.job(build.RunnerJobName(e.Name, m.Name))
		if j == nil {
			// A Job this pass creates: its ledgers exist already, and its
			// pods start under their caps.
			j = p.created(build.RunnerJobName(e.Name, m.Name))
		}
		if j == nil || j.DeletionTimestamp != nil || jobFinished(j) {
			continue
		}
		done := completedIndexes(j)
		for s := range int(e.Spec.ShardsPerModelOrDefault()) {
			cm := byName[corev1.ConfigMap](w.Ledgers, build.LedgerName(e.Name, m.Name, s))
			if done[s] || cm == nil || cm.DeletionTimestamp != nil {
				continue
			}
			var stored *contract.BudgetCap
			if v, ok := cm.Annotations[contract.LedgerBudgetCapAnnotation]; ok {
				if c, err := contract.ParseBudgetCap(v); err == nil {
					stored = &c
				}
			}
			if recorded == nil {
				recorded = w.shardSpending()
			}
			shards = append(shards, CapShard{Model: m.Name, Recorded: recorded[m.Name][s], Stored: stored})
			ledgers = append(ledgers, cm)
		}
	}
	caps, refresh := BudgetCaps(e.Spec.Budget, spend, shards)
	if !refresh {
		return
	}
	for i, cm := range ledgers {
		if s := shards[i].Stored; (s == nil && caps[i].IsZero()) || (s != nil && s.Equal(caps[i])) {
			continue
		}
		p.Annotate = append(p.Annotate, Annotate{Object: cm.DeepCopy(), Annotations: map[string]string{
			contract.LedgerBudgetCapAnnotation: caps[i].String(),
		}})
	}
}

// created is the Job named name that the plan creates, or nil.
func (p *Plan) created(name string) *batchv1.Job {
	for _, o := range p.Create {
		if j, ok := o.(*batchv1.Job); ok && j.Name == name {
			return j
		}
	}
	return nil
}

// completedIndexes are the indexes an Indexed Job completed
// (status.completedIndexes: "1,3-5").
func completedIndexes(j *batchv1.Job) map[int]bool {
	out := map[int]bool{}
	for part := range strings.SplitSeq(j.Status.CompletedIndexes, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := a; i <= b && i-a < 1<<16; i++ {
			out[i] = true
		}
	}
	return out
}

package runner

import (
	"context"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// Execute runs the engine into an output directory: runs already finished
// in out's existing records are skipped (a resume), new runs are appended
// to records.jsonl and traces.jsonl as they finish, and summary.json is
// written from every record in records.jsonl, also when ctx ended early. It
// does not close out. The spending of out's existing records counts into
// cfg.Allowance (the shard's budget cap is cumulative).
func Execute(ctx context.Context, cfg Config, out *Output) (Result, summary.Summary, error) {
	if err := refuseLegacyDerail(cfg, out.Existing); err != nil {
		return Result{}, summary.Summary{}, err
	}
	cfg.Done = contract.DoneKeys(out.Existing)
	for _, sp := range summary.Spent(out.Existing) {
		cfg.Allowance.AddSpent(sp.CompletionTokens, sp.Calls)
	}
	cfg.Previous = out.Existing
	cfg.Records, cfg.Traces = out.Records, out.Traces
	res, err := Run(ctx, cfg)
	if err != nil {
		return res, summary.Summary{}, err
	}
	all, err := out.AllRecords()
	if err != nil {
		return res, summary.Summary{}, err
	}
	s := summary.Aggregate(all)
	if err := out.WriteSummary(s); err != nil {
		return res, s, err
	}
	return res, s, nil
}

package runner

import (
	"fmt"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/methods"
)

// derailKey is the Derail part of the record keys of cfg's runs (nil when
// cfg runs problems).
func (cfg Config) derailKey() *contract.DerailRecord {
	if len(cfg.Derail) == 0 {
		return nil
	}
	st, _ := methods.CheckStatement(cfg.Options.CheckpointStatement)
	return &contract.DerailRecord{Schema: contract.DerailSchema, CheckpointStatement: st}
}

// refuseLegacyDerail fails a Derail run whose output already holds records
// of these cases without the current protocol's schema (written by the
// earlier reading of the experiment): they would share a records file, and
// a summary, with runs that mean something else.
func refuseLegacyDerail(cfg Config, existing []contract.Record) error {
	if len(cfg.Derail) == 0 {
		return nil
	}
	cases := make(map[string]bool, len(cfg.Derail))
	for _, t := range cfg.Derail {
		cases[t.Case.CaseID] = true
	}
	n := 0
	for _, r := range existing {
		if cases[r.ProblemID] && (r.Derail == nil || r.Derail.Schema != contract.DerailSchema) {
			n++
		}
	}
	if n > 0 {
		return fmt.Errorf("the output directory holds %d Derail-550 records of the earlier protocol (before record schema %d: repair from the injected trajectory); they mean something else: write this run to a new --out directory", n, contract.DerailSchema)
	}
	return nil
}

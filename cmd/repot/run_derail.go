package repot

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"repot.dev/repot-operator/contract"
)

// addDerailFlags adds `repot run`'s Derail-550 flags.
func addDerailFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringSliceVar(&f.conditions, "conditions", contract.DefaultDerailConditions,
		"--suite derail-550: conditions to run on every case: "+strings.Join(contract.DerailConditions, ", "))
	fl.StringVar(&f.statement, "checkpoint-statement", contract.StatementPaper,
		"--suite derail-550: how repot-full and repot-no-prefix state the checkpoint problem: paper (the paper's one sentence) or full (rules, move format and the checkpoint state)")
}

// derailMethods puts the conditions in place of the methods for a Derail
// run, and refuses the Derail flags elsewhere.
func (f *runFlags) derailMethods(c *cobra.Command, derail bool) error {
	if !derail {
		for _, name := range []string{"conditions", "checkpoint-statement"} {
			if c.Flags().Changed(name) {
				return fmt.Errorf("--%s applies to --suite derail-550 only", name)
			}
		}
		return nil
	}
	if c.Flags().Changed("methods") {
		return fmt.Errorf("--suite derail-550 runs conditions, not methods: use --conditions (%s)", strings.Join(contract.DerailConditions, ","))
	}
	if len(f.conditions) == 0 {
		return fmt.Errorf("--conditions is empty: name one or more of %s", strings.Join(contract.DerailConditions, ", "))
	}
	seen := map[string]bool{}
	for _, cond := range f.conditions {
		if !contract.ValidCondition(cond) {
			return fmt.Errorf("unknown Derail-550 condition %q (known: %s)", cond, strings.Join(contract.DerailConditions, ", "))
		}
		if seen[cond] {
			return fmt.Errorf("condition %q is named twice in --conditions", cond)
		}
		seen[cond] = true
	}
	if f.statement != contract.StatementPaper && f.statement != contract.StatementFull {
		return fmt.Errorf("--checkpoint-statement %q: use paper or full", f.statement)
	}
	f.methods = f.conditions
	return nil
}

package repot

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"

	"repot.dev/repot-operator/runner/ledger"
)

func newLedgerRestoreCommand() *cobra.Command {
	var f ledgerFlags
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "restore --configmap NAME --file FILE",
		Short: "Write the ledger's records into FILE so that `repot run --resume` skips them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.store()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var n int
			var last error
			// The API server may be briefly unreachable when the pod starts.
			err = wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Steps: 10, Cap: 15 * time.Second},
				func(ctx context.Context) (bool, error) {
					n, last = ledger.Restore(ctx, s, f.file)
					return last == nil, nil
				})
			if err != nil {
				if last != nil {
					return fmt.Errorf("ledger restore: %w", last)
				}
				return fmt.Errorf("ledger restore: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ledger %s/%s: restored %d records into %s\n", f.namespace, f.configMap, n, f.file)
			return nil
		},
	}
	f.register(c)
	c.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "give up after this long")
	return c
}

package repot

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/ledger"
)

func newLedgerSyncCommand() *cobra.Command {
	var f ledgerFlags
	s := ledger.Syncer{}
	var readingsFile string
	var up artifactsFlags
	c := &cobra.Command{
		Use:   "sync --configmap NAME --file FILE",
		Short: "Tail FILE and merge new records into the ledger in small batches, and on SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := f.store()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			s.Store = st
			s.Tail = &ledger.Tail{Path: f.file}
			s.ModeFile = filepath.Join(filepath.Dir(f.file), contract.SandboxModeFile)
			s.DoneFile = filepath.Join(filepath.Dir(f.file), contract.RunDoneFile)
			s.SyncedFile = filepath.Join(filepath.Dir(f.file), contract.LedgerSyncedFile)
			s.ProvenanceFile = filepath.Join(filepath.Dir(f.file), contract.ProvenanceFile)
			s.CapFile = filepath.Join(filepath.Dir(f.file), contract.BudgetCapFile)
			s.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
			if up.enabled() {
				u, err := up.uploader(f.namespace, filepath.Dir(f.file))
				if err != nil {
					return err
				}
				s.Traces = u
			}
			readings := startReadingsSync(ctx, st, readingsFile, s.Logf)
			n, err := s.Run(ctx)
			if rerr := readings(); rerr != nil {
				fmt.Fprintf(os.Stderr, "ledger sync: GPU readings: final write: %v\n", rerr)
			}
			if err != nil {
				return fmt.Errorf("ledger sync: final write: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ledger %s/%s: synced %d records from %s\n", f.namespace, f.configMap, n, f.file)
			return nil
		},
	}
	f.register(c)
	fl := c.Flags()
	fl.DurationVar(&s.Poll, "poll", time.Second, "how often to read the file")
	fl.DurationVar(&s.MaxDelay, "max-delay", 5*time.Second, "longest time a record waits before it is written")
	fl.IntVar(&s.Batch, "batch", 25, "write as soon as this many records wait")
	fl.DurationVar(&s.FinalTimeout, "final-timeout", 20*time.Second, "bound on the last write after SIGTERM")
	fl.DurationVar(&s.CapEvery, "cap-every", ledger.DefaultCapEvery, "how often to read the ledger's budget cap into the file "+contract.BudgetCapFile+" beside FILE")
	up.register(c, true)
	fl.StringVar(&readingsFile, "readings-file", "", "GPU readings file (gpu.jsonl, written by repot run --gpu-telemetry-url) to copy into the ledger's "+contract.LedgerReadingsKey+" key; empty: none")
	return c
}

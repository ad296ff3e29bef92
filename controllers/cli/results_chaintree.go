package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/analysis/chaintree"
	"repot.dev/repot-operator/contract"
)

// The formats of repot results export.
const (
	formatRecords   = "records"
	formatChaintree = "chaintree"
)

// exportChaintree is repot results export --format chaintree: the chain-tree
// examples of local trace files.
func (o *exportOptions) exportChaintree(cmd *cobra.Command) error {
	if o.evaluation != "" || o.schedule != "" {
		return errors.New("--format chaintree reads trace files, not the cluster: the traces are on the spec.artifacts PVC; copy them out and give them with --traces")
	}
	if len(o.traces) == 0 {
		return errors.New("--format chaintree needs --traces PATH (a repot run output directory or a traces JSONL file)")
	}
	files, err := traceFiles(o.traces)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	var out *os.File
	if o.out != "" && o.out != "-" {
		if out, err = os.Create(o.out); err != nil {
			return err
		}
		defer out.Close()
		w = out
	}
	opts := chaintree.Options{Trace: o.backtrackTrace, Completable: chaintree.SolverCompletable}
	var total chaintree.Counts
	for _, path := range files {
		c, err := exportTraceFile(w, path, opts)
		total.Continue += c.Continue
		total.Answer += c.Answer
		total.Backtrack += c.Backtrack
		total.Skipped += c.Skipped
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if out != nil {
		if err := out.Close(); err != nil {
			return err
		}
	}
	errw := cmd.ErrOrStderr()
	fmt.Fprintf(errw, "chaintree: %d examples from %d trace files: continue %d, answer %d, backtrack %d\n",
		total.Continue+total.Answer+total.Backtrack, len(files), total.Continue, total.Answer, total.Backtrack)
	if total.Skipped > 0 {
		fmt.Fprintf(errw, "chaintree: skipped %d traces whose problem could not be read (docs/chaintree.md)\n", total.Skipped)
	}
	return nil
}

func exportTraceFile(w io.Writer, path string, opts chaintree.Options) (chaintree.Counts, error) {
	f, err := os.Open(path)
	if err != nil {
		return chaintree.Counts{}, err
	}
	defer f.Close()
	return chaintree.ExportJSONL(w, f, opts)
}

// traceFiles resolves --traces: a file is itself; a directory is its
// traces.jsonl (a repot run output directory) or, without one, its *.jsonl
// files in name order (a copy of the artifacts PVC:
// MODEL-shard-N.jsonl).
func traceFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		if _, err := os.Stat(filepath.Join(p, contract.TracesFile)); err == nil {
			files = append(files, filepath.Join(p, contract.TracesFile))
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.jsonl"))
		if err != nil {
			return nil, err
		}
		var found []string
		for _, m := range matches {
			if b := filepath.Base(m); b != contract.RecordsFile {
				found = append(found, m)
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s holds no %s and no other *.jsonl trace files", p, contract.TracesFile)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, nil
}

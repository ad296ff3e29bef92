package repot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/analysis/chaintree"
	"repot.dev/repot-operator/cmd/repot/results"
	"repot.dev/repot-operator/contract"
)

// The formats of repot results export.
const (
	formatRecords   = "records"
	formatChaintree = "chaintree"
	formatTraces    = "traces"
)

// exportChaintree is repot results export --format chaintree: the chain-tree
// examples of local trace files.
func (o *exportOptions) exportChaintree(cmd *cobra.Command) error {
	if o.schedule != "" {
		return errors.New("--format chaintree reads one evaluation's stored traces (--evaluation NAME) or trace files (--traces PATH), not a schedule")
	}
	if (o.evaluation == "") == (len(o.traces) == 0) {
		return errors.New("--format chaintree needs --evaluation NAME (its traces in the evaluation's S3 store) or --traces PATH (a repot run output directory or a traces JSONL file), not both")
	}
	w, closeOut, err := o.output(cmd)
	if err != nil {
		return err
	}
	opts := chaintree.Options{Trace: o.backtrackTrace, Completable: chaintree.SolverCompletable}
	var total chaintree.Counts
	add := func(c chaintree.Counts) {
		total.Continue += c.Continue
		total.Answer += c.Answer
		total.Backtrack += c.Backtrack
		total.Skipped += c.Skipped
	}
	source := ""
	if o.evaluation != "" {
		st, err := o.storedTraces(cmd)
		if err != nil {
			return err
		}
		err = st.Each(cmd.Context(), func(line []byte) error {
			c, err := chaintree.ExportJSONL(w, bytes.NewReader(line), opts)
			add(c)
			return err
		})
		if err != nil {
			_ = closeOut()
			o.discardOutput()
			return err
		}
		source = fmt.Sprintf("%d stored objects of %s", st.Manifest.Objects, o.evaluation)
	} else {
		files, err := traceFiles(o.traces)
		if err != nil {
			return err
		}
		for _, path := range files {
			c, err := exportTraceFile(w, path, opts)
			add(c)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		source = fmt.Sprintf("%d trace files", len(files))
	}
	if err := closeOut(); err != nil {
		return err
	}
	errw := cmd.ErrOrStderr()
	fmt.Fprintf(errw, "chaintree: %d examples from %s: continue %d, answer %d, backtrack %d\n",
		total.Continue+total.Answer+total.Backtrack, source, total.Continue, total.Answer, total.Backtrack)
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

// output is --out FILE, or standard output for "" and "-"; closeOut closes
// the file and reports a failed write.
func (o *exportOptions) output(cmd *cobra.Command) (io.Writer, func() error, error) {
	if o.out == "" || o.out == "-" {
		return cmd.OutOrStdout(), func() error { return nil }, nil
	}
	f, err := os.Create(o.out)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// discardOutput removes a --out FILE an export failed to finish: a stored
// object that fails its manifest's check is found only after its lines
// went out, and a half-written file must not pass for a complete export.
func (o *exportOptions) discardOutput() {
	if o.out != "" && o.out != "-" {
		_ = os.Remove(o.out)
	}
}

// storedTraces opens --evaluation's traces in its store.
func (o *exportOptions) storedTraces(cmd *cobra.Command) (*results.StoredTraces, error) {
	c, ns, err := o.cluster.client()
	if err != nil {
		return nil, err
	}
	return o.store.open(cmd.Context(), cmd.ErrOrStderr(), c, ns, o.evaluation)
}

// exportTraces is repot results export --format traces: the evaluation's
// stored traces as one JSONL file, each object checked against its
// manifest.
func (o *exportOptions) exportTraces(cmd *cobra.Command) error {
	if o.evaluation == "" || o.schedule != "" || len(o.traces) > 0 {
		return errors.New("--format traces needs --evaluation NAME (and reads its S3 store), without --schedule or --traces")
	}
	st, err := o.storedTraces(cmd)
	if err != nil {
		return err
	}
	w, closeOut, err := o.output(cmd)
	if err != nil {
		return err
	}
	n := 0
	err = st.Each(cmd.Context(), func(line []byte) error {
		n++
		_, err := w.Write(append(line, '\n'))
		return err
	})
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil {
		o.discardOutput()
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "traces: %d traces from %d stored objects of %s\n", n, st.Manifest.Objects, o.evaluation)
	return nil
}

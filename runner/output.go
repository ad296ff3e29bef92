package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// Output is a run's output directory: records.jsonl (appended as runs
// finish), traces.jsonl and summary.json.
type Output struct {
	Dir         string
	RecordsPath string
	TracesPath  string
	// Existing holds the records found on a resume.
	Existing []contract.Record
	// DroppedPartial is the length of a cut-off last line a resume removed.
	DroppedPartial int

	Records *os.File
	Traces  *os.File
}

// OpenOutput prepares dir. Without resume, an existing non-empty
// records.jsonl is an error (so that no finished work is overwritten). With
// resume, the existing records are read (a cut-off last line is cut away)
// and both files are opened for appending. tracesPath "" means
// dir/traces.jsonl.
func OpenOutput(dir, tracesPath string, resume bool) (*Output, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	o := &Output{Dir: dir, RecordsPath: filepath.Join(dir, contract.RecordsFile), TracesPath: tracesPath}
	if o.TracesPath == "" {
		o.TracesPath = filepath.Join(dir, contract.TracesFile)
	}
	st, err := os.Stat(o.RecordsPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !resume && st.Size() > 0:
		return nil, fmt.Errorf("%s already holds records: pass --resume to continue it, or choose another --out", o.RecordsPath)
	case resume:
		if err := o.readExisting(st.Size()); err != nil {
			return nil, err
		}
	}
	traceFlags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if !resume {
		traceFlags |= os.O_TRUNC
	}
	if o.Records, err = os.OpenFile(o.RecordsPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, err
	}
	if o.Traces, err = os.OpenFile(o.TracesPath, traceFlags, 0o644); err != nil {
		o.Records.Close()
		return nil, err
	}
	return o, nil
}

func (o *Output) readExisting(size int64) error {
	f, err := os.Open(o.RecordsPath)
	if err != nil {
		return err
	}
	recs, partial, err := contract.ReadRecords(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", o.RecordsPath, err)
	}
	if partial > 0 {
		size -= int64(partial)
		if err := os.Truncate(o.RecordsPath, size); err != nil {
			return err
		}
	}
	if err := terminateLastLine(o.RecordsPath, size); err != nil {
		return err
	}
	o.Existing, o.DroppedPartial = recs, partial
	return nil
}

// terminateLastLine adds the newline a complete last record may lack (a
// file written by another tool, or a write cut just before its newline), so
// that the next appended record starts a line of its own.
func terminateLastLine(path string, size int64) error {
	if size == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.WriteAt([]byte{'\n'}, size)
	return err
}

// Close syncs and closes the files.
func (o *Output) Close() error {
	var errs []error
	for _, f := range []*os.File{o.Records, o.Traces} {
		if f == nil {
			continue
		}
		errs = append(errs, f.Sync(), f.Close())
	}
	return errors.Join(errs...)
}

// AllRecords reads back every record in records.jsonl.
func (o *Output) AllRecords() ([]contract.Record, error) {
	f, err := os.Open(o.RecordsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, _, err := contract.ReadRecords(f)
	return recs, err
}

// WriteSummary writes s as dir/summary.json (indented, newline-terminated),
// replacing the file atomically.
func (o *Output) WriteSummary(s summary.Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(o.Dir, "."+contract.SummaryFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(o.Dir, contract.SummaryFile))
}

// writeJSONLine writes v as one JSON line.
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

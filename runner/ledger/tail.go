package ledger

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	"repot.dev/repot-operator/contract"
)

// Tail reads the complete lines appended to a records file since the last
// call. A last line without its newline is left for a later call, so a
// record being written is never read half. When the file shrinks (it was
// rewritten), reading starts again from the top; the ledger's merge by key
// makes that harmless.
type Tail struct {
	Path   string
	offset int64
	line   int // lines consumed so far
}

// Next returns the records of the new complete lines and the lines that are
// not records (with their line numbers). A missing file yields nothing.
func (t *Tail) Next() ([]contract.Record, []LineError, error) {
	f, err := os.Open(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() < t.offset {
		t.offset, t.line = 0, 0
	}
	if st.Size() == t.offset {
		return nil, nil, nil
	}
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, st.Size()-t.offset))
	if err != nil {
		return nil, nil, err
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil, nil
	}
	data = data[:end+1]
	t.offset += int64(len(data))
	var recs []contract.Record
	var bad []LineError
	for _, line := range bytes.Split(data[:end], []byte{'\n'}) {
		t.line++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		r, err := contract.ParseRecord(line)
		if err != nil {
			bad = append(bad, LineError{Source: t.Path, Line: t.line, Err: err.Error()})
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, nil
}

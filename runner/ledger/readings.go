package ledger

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"repot.dev/repot-operator/contract"
)

// MergeLines adds lines to the text existing and returns the new text and
// how many lines were new. A reading is a fact at a moment: lines are kept
// verbatim, in order, and a line already present is not added again, so
// nothing once recorded is ever dropped.
func MergeLines(existing string, add []string) (string, int) {
	seen := map[string]bool{}
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(existing))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		b.WriteString(line)
		b.WriteByte('\n')
	}
	added := 0
	for _, line := range add {
		line = strings.TrimSpace(line)
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		b.WriteString(line)
		b.WriteByte('\n')
		added++
	}
	return b.String(), added
}

// MergeReadings adds reading lines to the ledger's data key
// contract.LedgerReadingsKey, with the
// same optimistic concurrency as Merge; the records and the readings
// together must fit contract.MaxLedgerBytes.
func (s *Store) MergeReadings(ctx context.Context, lines []string) (int, error) {
	return s.mergeKey(ctx, s.Name, contract.LedgerReadingsKey, func(old string, _ int) (string, int, error) {
		merged, n := MergeLines(old, lines)
		return merged, n, nil
	})
}

// LineTail reads the complete lines appended to a file since the last
// call, like Tail, without parsing them.
type LineTail struct {
	Path   string
	offset int64
}

// Next returns the new complete, non-blank lines. A missing file yields
// nothing; a file that shrank is read again from the top.
func (t *LineTail) Next() ([]string, error) {
	f, err := os.Open(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < t.offset {
		t.offset = 0
	}
	if st.Size() == t.offset {
		return nil, nil
	}
	if _, err := f.Seek(t.offset, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, st.Size()-t.offset))
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil
	}
	t.offset += int64(end + 1)
	var out []string
	for _, line := range strings.Split(string(data[:end]), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out, nil
}

// ReadingsMerger stores reading lines; *Store is the real one.
type ReadingsMerger interface {
	MergeReadings(ctx context.Context, lines []string) (int, error)
}

// ReadingsSyncer copies a runner's GPU readings file into the ledger: each
// poll writes what is new at once (a shard has a handful of readings), and
// once more when ctx ends. Lines that are not readings are logged and
// skipped; a failed write is retried on the next poll.
type ReadingsSyncer struct {
	Store ReadingsMerger
	Tail  *LineTail
	Clock clock.WithTicker
	// Poll defaults to 1s, FinalTimeout to 20s.
	Poll, FinalTimeout time.Duration
	Logf               func(format string, args ...any)

	pending []string
	written int
}

// Run syncs until ctx ends, then writes what is still pending and returns
// how many readings it wrote and the final write's error.
func (s *ReadingsSyncer) Run(ctx context.Context) (int, error) {
	if s.Clock == nil {
		s.Clock = clock.RealClock{}
	}
	if s.Poll <= 0 {
		s.Poll = time.Second
	}
	if s.FinalTimeout <= 0 {
		s.FinalTimeout = 20 * time.Second
	}
	if s.Logf == nil {
		s.Logf = func(string, ...any) {}
	}
	t := s.Clock.NewTicker(s.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.read()
			fctx, cancel := context.WithTimeout(context.Background(), s.FinalTimeout)
			defer cancel()
			return s.written, s.flush(fctx)
		case <-t.C():
			s.read()
			if err := s.flush(ctx); err != nil && ctx.Err() == nil {
				s.Logf("ledger: GPU readings: %v (will retry)", err)
			}
		}
	}
}

func (s *ReadingsSyncer) read() {
	lines, err := s.Tail.Next()
	if err != nil {
		s.Logf("ledger: reading %s: %v", s.Tail.Path, err)
		return
	}
	for _, l := range lines {
		if _, err := contract.ParseReading([]byte(l)); err != nil {
			s.Logf("ledger: skipping a line of %s that is not a GPU reading: %v", s.Tail.Path, err)
			continue
		}
		s.pending = append(s.pending, l)
	}
}

func (s *ReadingsSyncer) flush(ctx context.Context) error {
	if len(s.pending) == 0 {
		return nil
	}
	if _, err := s.Store.MergeReadings(ctx, s.pending); err != nil {
		if errors.Is(err, ErrLedgerFull) {
			s.pending = nil
		}
		return err
	}
	s.written += len(s.pending)
	s.pending = nil
	return nil
}

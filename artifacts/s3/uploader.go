package s3

import (
	"repot.dev/repot-operator/artifacts"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"k8s.io/utils/clock"
)

// ShardUploader streams one shard's traces file (the runner's
// traces.jsonl, which the engine appends a run's trace to before its
// record) to the store. Each Sync uploads the complete lines written since
// the last one as the shard's next segment object and then rewrites the
// shard's manifest, so a trace is in the store before the ledger sidecar
// writes the records read after that Sync. The file is the spill: while the
// store is unreachable, traces wait there (on the pod's disk, not in
// memory) and go up with the next successful Sync, in one segment; a
// segment larger than the part size goes up in parts.
//
// A resumed shard (a new pod, or a restarted sidecar) appends: segment
// numbers continue after the highest in the store, and the manifest keeps
// the earlier pods' segments. The uploaded offset into the local file is
// kept in StatePath, so a restarted sidecar does not upload a trace twice.
type ShardUploader struct {
	Store  *Store
	Layout artifacts.Layout
	Shard  artifacts.Shard
	// Path is the traces file.
	Path string
	// StatePath keeps the uploaded offset across sidecar restarts ("" for
	// none; then a restarted sidecar starts from the file's beginning).
	StatePath string
	Clock     clock.PassiveClock
	// MinBackoff and MaxBackoff space the retries after a failed upload
	// (doubling from MinBackoff; defaults 1s and 30s).
	MinBackoff, MaxBackoff time.Duration

	started  bool
	manifest artifacts.ShardManifest
	nextSeq  int
	offset   int64
	dirty    bool // the manifest in the store lags m.manifest

	failures int
	nextTry  time.Time
	lastErr  error
}

type uploaderState struct {
	Offset int64 `json:"offset"`
}

func (u *ShardUploader) defaults() {
	if u.Clock == nil {
		u.Clock = clock.RealClock{}
	}
	if u.MinBackoff <= 0 {
		u.MinBackoff = time.Second
	}
	if u.MaxBackoff <= 0 {
		u.MaxBackoff = 30 * time.Second
	}
}

// start reads what earlier pods stored and where this pod's file stands.
func (u *ShardUploader) start(ctx context.Context) error {
	if err := u.Layout.Validate(); err != nil {
		return err
	}
	if err := u.Shard.Validate(); err != nil {
		return err
	}
	m, ok, err := ReadShardManifest(ctx, u.Store, u.Layout, u.Shard)
	if err != nil {
		return err
	}
	if !ok {
		m = artifacts.ShardManifest{Shard: u.Shard}
	}
	// Continue after every segment in the store, listed or not: a pod
	// killed between a segment and its manifest left one the manifest
	// does not list, whose runs are not in the ledger (they run again);
	// it is never overwritten.
	objs, err := u.Store.List(ctx, u.Layout.ShardPrefix(u.Shard)+"traces/")
	if err != nil {
		return err
	}
	next := 1
	for _, o := range objs {
		if seq, ok := u.Layout.SegmentSeq(u.Shard, o.Key); ok && seq >= next {
			next = seq + 1
		}
	}
	m.Final, m.LostBytes = false, 0
	u.manifest, u.nextSeq = m, next
	u.offset = u.readState()
	u.started = true
	return nil
}

func (u *ShardUploader) readState() int64 {
	if u.StatePath == "" {
		return 0
	}
	b, err := os.ReadFile(u.StatePath)
	if err != nil {
		return 0
	}
	var st uploaderState
	if json.Unmarshal(b, &st) != nil || st.Offset < 0 {
		return 0
	}
	// A file shorter than the offset is a new file (a new pod's).
	if fi, err := os.Stat(u.Path); err != nil || fi.Size() < st.Offset {
		return 0
	}
	return st.Offset
}

func (u *ShardUploader) writeState() error {
	if u.StatePath == "" {
		return nil
	}
	b, _ := json.Marshal(uploaderState{Offset: u.offset})
	tmp := filepath.Join(filepath.Dir(u.StatePath), "."+filepath.Base(u.StatePath)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, u.StatePath)
}

// Sync uploads the complete trace lines written since the last upload. After
// a failure it waits out a backoff: until then it returns the last error
// without contacting the store.
func (u *ShardUploader) Sync(ctx context.Context) error {
	u.defaults()
	if now := u.Clock.Now(); u.failures > 0 && now.Before(u.nextTry) {
		return fmt.Errorf("retrying at %s: %w", u.nextTry.Format(time.RFC3339), u.lastErr)
	}
	if err := u.sync(ctx); err != nil {
		u.failures++
		wait := u.MinBackoff << min(u.failures-1, 16)
		u.nextTry = u.Clock.Now().Add(min(wait, u.MaxBackoff))
		u.lastErr = err
		return err
	}
	u.failures, u.lastErr = 0, nil
	return nil
}

func (u *ShardUploader) sync(ctx context.Context) error {
	if !u.started {
		if err := u.start(ctx); err != nil {
			return err
		}
	}
	f, err := os.Open(u.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return u.flushManifest(ctx)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	n, lines, err := completeLines(f, u.offset, fi.Size())
	if err != nil {
		return err
	}
	if n > 0 {
		key := u.Layout.SegmentKey(u.Shard, u.nextSeq)
		obj, err := u.Store.Put(ctx, key, io.NewSectionReader(f, u.offset, n), n)
		if err != nil {
			return err
		}
		obj.Lines = lines
		u.manifest.Objects = append(u.manifest.Objects, obj)
		u.nextSeq++
		u.offset += n
		u.dirty = true
		// The segment is stored: a failed state write only risks a second
		// copy of its traces after a sidecar restart.
		_ = u.writeState()
	}
	return u.flushManifest(ctx)
}

func (u *ShardUploader) flushManifest(ctx context.Context) error {
	if !u.dirty {
		return nil
	}
	b, err := json.MarshalIndent(u.manifest, "", "  ")
	if err != nil {
		return err
	}
	if _, err := u.Store.PutBytes(ctx, u.Layout.ShardManifestKey(u.Shard), append(b, '\n')); err != nil {
		return err
	}
	u.dirty = false
	return nil
}

// Finish uploads what is left, retrying with backoff until ctx ends, then
// marks the manifest final, with what could not be uploaded counted as
// lost. The error is the last failure when something was lost or the
// final manifest could not be written.
func (u *ShardUploader) Finish(ctx context.Context) (artifacts.Progress, error) {
	u.defaults()
	var err error
	u.failures = 0 // no backoff carried in: the first try is now
	for {
		if err = u.Sync(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(max(0, u.nextTry.Sub(u.Clock.Now()))):
			continue
		}
		break
	}
	if !u.started {
		return u.Progress(), fmt.Errorf("the store was unreachable for the whole run: %w", err)
	}
	u.manifest.Final = true
	u.manifest.LostBytes = u.pending()
	u.dirty = true
	// The final manifest gets its own short deadline, so that a ctx spent
	// on retries still leaves it a try.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if merr := u.flushManifest(mctx); merr != nil {
		return u.Progress(), errors.Join(err, fmt.Errorf("final manifest: %w", merr))
	}
	if u.manifest.LostBytes > 0 {
		return u.Progress(), fmt.Errorf("%d bytes of traces were not uploaded: %w", u.manifest.LostBytes, err)
	}
	return u.Progress(), nil
}

// pending is how many bytes of the file are not in the store.
func (u *ShardUploader) pending() int64 {
	fi, err := os.Stat(u.Path)
	if err != nil {
		return 0
	}
	return max(0, fi.Size()-u.offset)
}

// Progress reports what is stored, pending and lost.
func (u *ShardUploader) Progress() artifacts.Progress {
	p := artifacts.Progress{PendingBytes: u.pending(), LostBytes: u.manifest.LostBytes, Final: u.manifest.Final}
	for _, o := range u.manifest.Objects {
		p.Objects++
		p.Bytes += o.Size
	}
	if p.Final {
		p.PendingBytes = 0
	}
	if u.lastErr != nil {
		p.LastError = u.lastErr.Error()
	}
	return p
}

// completeLines returns how many bytes of f from off to size end with the
// last newline (a line still being written is left for the next Sync) and
// how many lines they hold, reading in bounded chunks.
func completeLines(f io.ReaderAt, off, size int64) (n int64, lines int, err error) {
	buf := make([]byte, 64<<10)
	end := off // just past the last newline seen
	for pos := off; pos < size; {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), size-pos)], pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		if k == 0 {
			break
		}
		chunk := buf[:k]
		lines += bytes.Count(chunk, []byte{'\n'})
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			end = pos + int64(i) + 1
		}
		pos += int64(k)
	}
	return end - off, lines, nil
}

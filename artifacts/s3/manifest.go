package s3

import (
	"repot.dev/repot-operator/artifacts"

	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
)

// maxManifestBytes bounds a manifest read from the store (a manifest is
// attacker-reachable input for whoever can write the bucket).
const maxManifestBytes = 16 << 20

// ReadShardManifest reads shard's manifest; ok is false when there is
// none yet.
func ReadShardManifest(ctx context.Context, s *Store, l artifacts.Layout, shard artifacts.Shard) (m artifacts.ShardManifest, ok bool, err error) {
	b, err := s.GetBytes(ctx, l.ShardManifestKey(shard), maxManifestBytes)
	if errors.Is(err, ErrNotFound) {
		return artifacts.ShardManifest{}, false, nil
	}
	if err != nil {
		return artifacts.ShardManifest{}, false, err
	}
	m, err = artifacts.ParseShardManifest(b, l, shard)
	if err != nil {
		return artifacts.ShardManifest{}, false, fmt.Errorf("%s: %w", l.ShardManifestKey(shard), err)
	}
	return m, true, nil
}

// Collect builds the evaluation's manifest from the manifests of shards,
// in their order; a shard without one counts as not final.
func Collect(ctx context.Context, s *Store, l artifacts.Layout, shards []artifacts.Shard) (artifacts.Manifest, error) {
	m := artifacts.Manifest{Complete: true}
	for _, sh := range shards {
		sm, ok, err := ReadShardManifest(ctx, s, l, sh)
		if err != nil {
			return artifacts.Manifest{}, err
		}
		if !ok {
			sm = artifacts.ShardManifest{Shard: sh}
		}
		m.Shards = append(m.Shards, sm)
		for _, o := range sm.Objects {
			m.Objects++
			m.Bytes += o.Size
		}
		m.LostBytes += sm.LostBytes
		m.Complete = m.Complete && sm.Final && sm.LostBytes == 0
	}
	return m, nil
}

// WriteManifest stores m as the evaluation's manifest.
func WriteManifest(ctx context.Context, s *Store, l artifacts.Layout, m artifacts.Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = s.PutBytes(ctx, l.ManifestKey(), append(b, '\n'))
	return err
}

// Traces streams every trace line of m's objects, in shard and segment
// order, to fn, checking each object's size and sha256 against the
// manifest as it is read: an object changed since it was listed is an
// error, not silently different traces.
func Traces(ctx context.Context, s *Store, m artifacts.Manifest, fn func(line []byte) error) error {
	for _, sm := range m.Shards {
		objs := slices.Clone(sm.Objects)
		for _, o := range objs {
			if err := readChecked(ctx, s, o, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxTraceLine bounds one trace line (a run's every prompt and reply).
const maxTraceLine = 64 << 20

func readChecked(ctx context.Context, s *Store, o artifacts.Object, fn func([]byte) error) error {
	r, err := s.Get(ctx, o.Key)
	if err != nil {
		return err
	}
	defer r.Close()
	h := sha256.New()
	cr := &countingReader{r: io.TeeReader(r, h)}
	sc := bufio.NewScanner(cr)
	sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
	for sc.Scan() {
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", o.Key, err)
	}
	return check(o, cr.n, h)
}

func check(o artifacts.Object, n int64, h hash.Hash) error {
	if n != o.Size {
		return fmt.Errorf("%s holds %d bytes, the manifest says %d", o.Key, n, o.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != o.SHA256 {
		return fmt.Errorf("%s has sha256 %s, the manifest says %s", o.Key, got, o.SHA256)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

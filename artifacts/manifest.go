package artifacts

import (
	"encoding/json"
	"fmt"
)

// ShardManifest lists a shard's trace segments in order. The shard's
// uploader rewrites it after each segment, so it always lists every
// segment that is complete in the store.
type ShardManifest struct {
	Shard   Shard    `json:"shard"`
	Objects []Object `json:"objects"`
	// LostBytes counts traces bytes the uploader gave up on (the store
	// was unreachable until the runner pod ended); 0 when complete.
	LostBytes int64 `json:"lostBytes,omitempty"`
	// Final is true once the shard's runner finished and every trace it
	// wrote is listed (or counted in LostBytes).
	Final bool `json:"final,omitempty"`
}

// Manifest is an evaluation's manifest: its shards' manifests in shard
// order, and their totals.
type Manifest struct {
	Shards    []ShardManifest `json:"shards"`
	Objects   int             `json:"objects"`
	Bytes     int64           `json:"bytes"`
	LostBytes int64           `json:"lostBytes,omitempty"`
	// Complete is true when every shard is final and lost nothing.
	Complete bool `json:"complete"`
}

// ParseShardManifest reads a shard manifest as stored, and refuses one
// that is not the shard's: another shard's, or listing an object that is
// not one of the shard's segments (a bucket writer could otherwise point a
// reader at any key), or a negative size.
func ParseShardManifest(b []byte, l Layout, shard Shard) (ShardManifest, error) {
	var m ShardManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return ShardManifest{}, err
	}
	if m.Shard != shard {
		return ShardManifest{}, fmt.Errorf("the manifest of shard %s, not %s", m.Shard, shard)
	}
	for _, o := range m.Objects {
		if _, ok := l.SegmentSeq(shard, o.Key); !ok {
			return ShardManifest{}, fmt.Errorf("lists %q, which is not one of the shard's segments", o.Key)
		}
		if o.Size < 0 || o.Lines < 0 {
			return ShardManifest{}, fmt.Errorf("lists %q with size %d and %d lines", o.Key, o.Size, o.Lines)
		}
	}
	if m.LostBytes < 0 {
		return ShardManifest{}, fmt.Errorf("lost bytes %d", m.LostBytes)
	}
	return m, nil
}

package artifacts

import (
	"testing"
)

// FuzzParseShardManifest: a manifest is read from the bucket, which anyone
// with write access to it controls. Whatever the bytes, parsing never
// panics, and an accepted manifest lists only the shard's own segments,
// whose keys round-trip through SegmentKey.
func FuzzParseShardManifest(f *testing.F) {
	l := Layout{Prefix: "p", Namespace: "ns", Evaluation: "ev", UID: "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"}
	shard := Shard{Model: "m", Index: 2}
	f.Add([]byte(`{"shard":{"model":"m","index":2},"objects":[{"key":"p/ns/ev/3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f/m/shard-0002/traces/000001.jsonl","size":10,"sha256":"ab","lines":1}],"final":true}`))
	f.Add([]byte(`{"shard":{"model":"m","index":2},"objects":[{"key":"p/ns/ev/3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f/m/shard-0002/traces/../../../other","size":1}]}`))
	f.Add([]byte(`{"shard":{"model":"x","index":2}}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseShardManifest(b, l, shard)
		if err != nil {
			return
		}
		if m.Shard != shard {
			t.Fatalf("accepted the manifest of shard %v", m.Shard)
		}
		for _, o := range m.Objects {
			seq, ok := l.SegmentSeq(shard, o.Key)
			if !ok || l.SegmentKey(shard, seq) != o.Key {
				t.Fatalf("accepted object %q, not a segment key of the shard", o.Key)
			}
			if o.Size < 0 {
				t.Fatalf("accepted size %d", o.Size)
			}
		}
	})
}

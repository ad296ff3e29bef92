package s3_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"repot.dev/repot-operator/artifacts/s3"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3test"
)

// BenchmarkShardUploaderSync measures one Sync of a segment of the given
// size against the real S3 server: the cost the ledger sidecar adds before
// a ledger write (the runner itself only writes its trace before its
// record). It reports the throughput and the peak Go heap during the
// uploads, which stays near one part whatever the segment size.
func BenchmarkShardUploaderSync(b *testing.B) {
	for _, size := range []int{256 << 10, 4 << 20, 40 << 20} {
		b.Run(byteSize(size), func(b *testing.B) {
			srv := s3test.Start(b)
			st := srv.Open(b, "")
			st.PartSize = 8 << 20
			dir := b.TempDir()
			path := filepath.Join(dir, "traces.jsonl")
			// The segment is written line by line, so that the benchmark
			// itself holds no segment-sized buffer in the heap it measures.
			line := []byte(`{"problem_id":"p","pad":"` + strings.Repeat("x", 4000) + `"}` + "\n")
			lines := size / len(line)
			u := &s3.ShardUploader{Store: st, Layout: artifacts.Layout{Namespace: "ns", Evaluation: "bench", UID: "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"},
				Shard: artifacts.Shard{Model: "m", Index: 0}, Path: path}
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			peak := watchHeap(b)
			b.SetBytes(int64(lines * len(line)))
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				for range lines {
					if _, err := f.Write(line); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := u.Sync(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			// The heap the uploads added above what the server and the
			// test held before them.
			b.ReportMetric(float64(peak()-min(peak(), base.HeapInuse))/(1<<20), "peak-heap-MiB")
		})
	}
}

// byteSize names a size for a sub-benchmark: 64KiB, 32MiB.
func byteSize(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MiB"
	}
	return strconv.Itoa(n>>10) + "KiB"
}

// watchHeap samples the heap in use every millisecond until the benchmark
// ends and returns a reader of the peak.
func watchHeap(b *testing.B) func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	b.Cleanup(func() { close(done) })
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return peak.Load
}

package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
	"repot.dev/repot-operator/artifacts/s3test"
	"repot.dev/repot-operator/contract"
)

// BenchmarkTraceUpload measures what uploading the traces costs the
// runner: the same simulated workload (open-source-120, the default
// methods, a simulated server answering at once, the real sandbox) written
// to the output directory alone (emptyDir), and with the artifact uploader
// syncing the traces file to a real S3 server every second (store), as the
// ledger sidecar does before its ledger writes: it reads the records once a
// second (ledger.Syncer's default Poll) and writes at most once per read.
// The sidecar runs in its own container there; here it shares the process,
// and the S3 server shares the machine's cores, which only adds to its
// cost. Compare the two with benchstat; the upload's memory is
// artifacts' BenchmarkShardUploaderSync.
func BenchmarkTraceUpload(b *testing.B) {
	hs := startSim(b, simOptions(b, 1, 0), nil)
	client := simClient(b, hs, 3)
	problems := openSource(b, 0)
	srv := s3test.Start(b)
	st := srv.Open(b, "")
	for _, store := range []bool{false, true} {
		name := "emptyDir"
		if store {
			name = "store"
		}
		b.Run(name, func(b *testing.B) {
			for i := range b.N {
				dir := b.TempDir()
				var stop func()
				if store {
					u := &s3.ShardUploader{
						Store: st, Path: filepath.Join(dir, contract.TracesFile),
						Layout: artifacts.Layout{Namespace: "ns", Evaluation: fmt.Sprintf("bench-%d", i), UID: "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"},
						Shard:  artifacts.Shard{Model: "m", Index: 0},
					}
					stop = syncEvery(b, u, time.Second)
				}
				res, _ := runInto(b, context.Background(), dir, client, problems, 16)
				if stop != nil {
					stop()
				}
				if len(res.Records) != len(problems)*len(contract.DefaultMethods) {
					b.Fatalf("%d records, want %d", len(res.Records), len(problems)*len(contract.DefaultMethods))
				}
			}
		})
	}
}

// syncEvery runs u.Sync every d until the returned stop, which finishes
// the upload.
func syncEvery(b *testing.B, u *s3.ShardUploader, d time.Duration) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := u.Sync(context.Background()); err != nil {
					b.Error(err)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		if _, err := u.Finish(context.Background()); err != nil {
			b.Error(err)
		}
	}
}

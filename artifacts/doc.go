// Package artifacts keeps an evaluation's traces in S3-compatible object
// storage, so that they outlive the runner pods that wrote them.
//
//   - Location and Credentials say where the store is and who the runner
//     is (location.go);
//   - Layout builds every object key from validated names only, never
//     from model text (layout.go);
//   - Store is the one client, minio-go underneath: put, get, list, remove
//     and the probe the operator runs before any runner starts (store.go);
//   - ShardUploader streams one shard's traces file to the store as
//     numbered segment objects with bounded memory (multipart above the
//     part size), retries with backoff, and a shard manifest with each
//     object's size and sha256 (uploader.go);
//   - the manifests, and the reader that checks them (manifest.go).
//
// The uploader runs in the runner pod's ledger sidecar, which holds the
// credentials; the runner container, where model-written programs run, never
// sees them.
package artifacts

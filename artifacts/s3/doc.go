// Package s3 is the artifact store's client (minio-go underneath), which
// the ledger sidecar, the operator's probe and cleanup Jobs and the readers
// use; the names it stores under are package artifacts'.
//
//   - Store: put, get, list, remove and the probe the operator runs before
//     any runner starts (store.go);
//   - ShardUploader streams one shard's traces file to the store as
//     numbered segment objects with bounded memory (multipart above the
//     part size), retries with backoff, and a shard manifest with each
//     object's size and sha256 (uploader.go);
//   - the manifests read, collected and written, and the reader of traces
//     that checks every object against its manifest (manifest.go).
//
// The uploader runs in the runner pod's ledger sidecar, which holds the
// credentials; the runner container, where model-written programs run, never
// sees them.
package s3

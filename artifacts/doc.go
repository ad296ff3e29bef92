// Package artifacts says where an evaluation's traces are kept in
// S3-compatible object storage, so that they outlive the runner pods that
// wrote them: what every writer and reader of them agrees on, with no client
// (the operator's planner and builders import it; the client is
// artifacts/s3).
//
//   - Location and Credentials say where the store is and who the runner
//     is (location.go);
//   - Layout builds every object key from validated names only, never
//     from model text (layout.go);
//   - Object, Progress: a stored object as a manifest lists it, and what a
//     shard's uploader has done (object.go);
//   - the manifests, and the check of one read from the store
//     (manifest.go).
package artifacts

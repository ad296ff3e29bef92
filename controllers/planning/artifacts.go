package planning

import (
	"encoding/json"
	"sort"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// artifactsStatus folds the shards' upload progress, which each ledger
// sidecar writes on its ledger (contract.LedgerArtifactsAnnotation), into
// status.artifacts; nil without an S3 store. It is Partial as soon as a
// shard gave traces up, Complete once the evaluation completed with every
// reporting shard final, else Uploading.
func artifactsStatus(e *repotv1.RepotEvaluation, w *World, o build.Options, complete bool) *repotv1.ArtifactsStatus {
	s := build.S3Store(e, o)
	if s == nil {
		return nil
	}
	l := build.ArtifactsLayout(e, s)
	st := &repotv1.ArtifactsStatus{
		URL: Truncate("s3://"+s.Bucket+"/"+l.EvaluationPrefix(), 1024), Endpoint: s.Endpoint, Region: s.Region, Insecure: s.Insecure,
		State: repotv1.ArtifactsUploading,
	}
	allFinal := true
	var errs []string
	for i := range w.Ledgers {
		raw, ok := w.Ledgers[i].Annotations[contract.LedgerArtifactsAnnotation]
		if !ok {
			continue
		}
		var p artifacts.Progress
		if json.Unmarshal([]byte(raw), &p) != nil {
			continue // written by the sidecar; a bad one is ignored, not fatal
		}
		st.Objects += int32(p.Objects)
		st.Bytes += p.Bytes
		st.LostBytes += p.LostBytes
		st.PendingBytes += p.PendingBytes
		allFinal = allFinal && p.Final
		if p.LastError != "" {
			errs = append(errs, p.LastError)
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		st.LastError = Truncate(errs[0], 1024)
	}
	switch {
	case st.LostBytes > 0:
		st.State = repotv1.ArtifactsPartial
	case complete && allFinal:
		st.State = repotv1.ArtifactsComplete
	}
	return st
}

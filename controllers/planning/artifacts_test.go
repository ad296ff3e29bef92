package planning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

func TestArtifactsStatus(t *testing.T) {
	store := repotv1.S3Store{Endpoint: "s3.example.com", Bucket: "traces", Prefix: "team-a"}
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).ArtifactsS3(store).Obj()
	ev.UID = "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"
	url := "s3://traces/team-a/ns/ev/3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f/"
	led := func(progress string) corev1.ConfigMap {
		cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "l"}}
		if progress != "" {
			cm.Annotations = map[string]string{contract.LedgerArtifactsAnnotation: progress}
		}
		return cm
	}
	cases := []struct {
		name     string
		eval     *repotv1.RepotEvaluation
		opts     build.Options
		ledgers  []corev1.ConfigMap
		complete bool
		want     *repotv1.ArtifactsStatus
	}{{
		name: "no store",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
	}, {
		name:    "uploading: shards summed, a spill ledger without the annotation ignored",
		eval:    ev,
		ledgers: []corev1.ConfigMap{led(`{"objects":3,"bytes":300,"pendingBytes":10}`), led(""), led(`{"objects":1,"bytes":50}`)},
		want:    &repotv1.ArtifactsStatus{URL: url, Endpoint: "s3.example.com", State: repotv1.ArtifactsUploading, Objects: 4, Bytes: 350, PendingBytes: 10},
	}, {
		name:     "complete: the evaluation completed and every shard is final",
		eval:     ev,
		ledgers:  []corev1.ConfigMap{led(`{"objects":3,"bytes":300,"final":true}`), led(`{"objects":1,"bytes":50,"final":true}`)},
		complete: true,
		want:     &repotv1.ArtifactsStatus{URL: url, Endpoint: "s3.example.com", State: repotv1.ArtifactsComplete, Objects: 4, Bytes: 350},
	}, {
		name:     "not complete while a shard is not final",
		eval:     ev,
		ledgers:  []corev1.ConfigMap{led(`{"objects":3,"bytes":300,"final":true}`), led(`{"objects":1,"bytes":50}`)},
		complete: true,
		want:     &repotv1.ArtifactsStatus{URL: url, Endpoint: "s3.example.com", State: repotv1.ArtifactsUploading, Objects: 4, Bytes: 350},
	}, {
		name:    "partial: a shard lost traces; a malformed annotation is ignored",
		eval:    ev,
		ledgers: []corev1.ConfigMap{led(`{"objects":2,"bytes":200,"lostBytes":70,"final":true,"lastError":"store down"}`), led(`{not json`)},
		want:    &repotv1.ArtifactsStatus{URL: url, Endpoint: "s3.example.com", State: repotv1.ArtifactsPartial, Objects: 2, Bytes: 200, LostBytes: 70, LastError: "store down"},
	}, {
		name: "the operator's default store",
		eval: func() *repotv1.RepotEvaluation {
			e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
			e.UID = ev.UID
			return e
		}(),
		opts: build.Options{DefaultS3: &repotv1.S3Store{Endpoint: "s3.example.com", Bucket: "platform"}},
		want: &repotv1.ArtifactsStatus{URL: "s3://platform/ns/ev/3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f/", Endpoint: "s3.example.com", State: repotv1.ArtifactsUploading},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := artifactsStatus(tc.eval, &World{Ledgers: tc.ledgers}, tc.opts, tc.complete)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status.artifacts (-want +got):\n%s", diff)
			}
		})
	}
}

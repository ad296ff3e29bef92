package build

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
)

func TestRunnerPodArtifacts(t *testing.T) {
	store := repotv1.S3Store{Endpoint: "minio.storage.svc:9000", Bucket: "traces", Prefix: "team-a", Region: "eu-west-1", CredentialsSecret: "s3-creds", Insecure: true}
	def := &repotv1.S3Store{Endpoint: "s3.example.com", Bucket: "platform"}
	cases := []struct {
		name     string
		eval     *repotv1.RepotEvaluation
		opts     Options
		wantArgs []string // the sidecar's artifacts arguments
		wantEnv  []string // the sidecar's credential variables
	}{{
		name: "no store",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		opts: testOpts,
	}, {
		name: "spec.artifacts.s3 with a Secret",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).ArtifactsS3(store).Obj(),
		opts: testOpts,
		wantArgs: []string{
			"--artifacts-endpoint=minio.storage.svc:9000", "--artifacts-bucket=traces", "--evaluation=ev", "--evaluation-uid=",
			"--model=m", "--shard=$(JOB_COMPLETION_INDEX)", "--traces-file=/repot/out/traces.jsonl",
			"--artifacts-prefix=team-a", "--artifacts-region=eu-west-1", "--artifacts-insecure=true",
		},
		wantEnv: []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"},
	}, {
		name: "the operator's default, ambient identity",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		opts: Options{DefaultS3: def},
		wantArgs: []string{
			"--artifacts-endpoint=s3.example.com", "--artifacts-bucket=platform", "--evaluation=ev", "--evaluation-uid=",
			"--model=m", "--shard=$(JOB_COMPLETION_INDEX)", "--traces-file=/repot/out/traces.jsonl",
		},
	}, {
		name: "a PVC overrides the default",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).ArtifactsPVC("traces").Obj(),
		opts: Options{DefaultS3: def},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := runnerPod(tc.eval, &tc.eval.Spec.Models[0], tc.opts)
			sync := pod.InitContainers[1]
			var args []string
			for _, a := range sync.Args {
				if strings.HasPrefix(a, "--artifacts-") || slices.ContainsFunc([]string{"--evaluation", "--model=", "--shard=", "--traces-file="}, func(p string) bool { return strings.HasPrefix(a, p) }) {
					args = append(args, a)
				}
			}
			if diff := cmp.Diff(tc.wantArgs, args); diff != "" {
				t.Errorf("ledger-sync artifacts args (-want +got):\n%s", diff)
			}
			var env []string
			for _, e := range sync.Env {
				if strings.HasPrefix(e.Name, "AWS_") {
					env = append(env, e.Name)
					if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != store.CredentialsSecret || e.ValueFrom.SecretKeyRef.Key != e.Name {
						t.Errorf("%s is not from Secret %s key %s: %+v", e.Name, store.CredentialsSecret, e.Name, e.ValueFrom)
					}
				}
			}
			if diff := cmp.Diff(tc.wantEnv, env); diff != "" {
				t.Errorf("ledger-sync credentials (-want +got):\n%s", diff)
			}
			// The credentials and the store reach no other container: the
			// runner, where the model's programs run, never sees them.
			for _, c := range slices.Concat(pod.InitContainers[:1], pod.Containers) {
				for _, e := range c.Env {
					if strings.HasPrefix(e.Name, "AWS_") {
						t.Errorf("container %s has %s", c.Name, e.Name)
					}
				}
				for _, e := range c.EnvFrom {
					t.Errorf("container %s has envFrom %+v", c.Name, e)
				}
			}
			if run := pod.Containers[0]; slices.ContainsFunc(run.Args, func(a string) bool { return strings.Contains(a, "artifacts-") }) {
				t.Errorf("the run container has artifacts arguments: %v", run.Args)
			}
		})
	}
}

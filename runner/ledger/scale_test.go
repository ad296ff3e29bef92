package ledger_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/integration/framework"
	"repot.dev/repot-operator/controllers/planning"
	"repot.dev/repot-operator/runner/ledger"
)

// maxRecord is a run record whose every outside text is at its cap (a long
// server reply quoted in the infrastructure error, cut where the record is
// made) and whose numbers are large; rounds recorded repair rounds.
func maxRecord(model, problem, method string, rounds int) contract.Record {
	r := contract.Record{
		Model: model, ProblemID: problem, Environment: "pddl_blocksworld", Complexity: 1 << 20, Method: method,
		StoppedReason: "infra_error", Route: contract.RouteFreshShortPrefix, RepairUsed: true,
		Calls: 1 << 20, PromptTokens: 1 << 40, CompletionTokens: 1 << 40, CachedTokens: 1 << 40, ReasoningTokens: 1 << 40,
		InitialPlanLen: 1 << 30, InitialPrefixPermille: 999, InfraError: strings.Repeat("502 <html>bad gateway é</html>\n", 1000),
		InfraRetries: 1 << 20, WallMillis: 1 << 50, StartedUnixMilli: 1 << 50, InFlightLimit: 1 << 20,
	}
	if rounds == 0 {
		// The figures of the baselines, which record no rounds (a record
		// carries one of them; all at once bound each).
		r.Samples = 1 << 20
		r.VEX = &contract.VEXStats{Proposer: "json", ChunkSize: 1 << 20, ChunkAttempts: 1 << 20, Rollbacks: 1 << 20, Committed: 1 << 30, LLMCalls: 1 << 20}
		r.StepAgent = &contract.StepAgentStats{Steps: 1 << 30, Rollbacks: 1 << 30, LoopRecoveries: 1 << 30}
	}
	for range rounds {
		r.Rounds = append(r.Rounds, contract.Round{Valid: true, Prefix: 1 << 30, Accepts: 1 << 10, Tokens: 1 << 40, Kept: true, NoCall: true})
	}
	if rounds > 0 {
		r.Votes, r.LoopStop, r.VRRCalibration = 1<<10, contract.LoopGain, true
	}
	r.CapTexts()
	return r
}

// TestRecordBytes: the record sizes the operator plans a shard's spill
// ConfigMaps with hold the largest records.
func TestRecordBytes(t *testing.T) {
	line := func(r contract.Record) int {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return len(b) + 1
	}
	model := strings.Repeat("m", 63)
	problem := "puzzlezoo-775-blocksworld-complexity-20-instance-0000"
	// A Derail-550 record also carries its mark.
	derail := func(r contract.Record) contract.Record {
		r.Derail = &contract.DerailRecord{Schema: contract.DerailSchema, CheckpointStatement: contract.StatementPaper, InjectionType: "legal_wrong_action"}
		return r
	}
	if n := line(derail(maxRecord(model, problem, contract.MethodAdaptive, 0))); n > contract.LedgerRecordBytes {
		t.Errorf("a record without rounds takes %d bytes, more than contract.LedgerRecordBytes %d", n, contract.LedgerRecordBytes)
	}
	for rounds := 1; rounds <= 9; rounds++ {
		if n := line(derail(maxRecord(model, problem, contract.MethodVRR, rounds))); n > contract.LedgerRecordBytes+rounds*contract.LedgerRoundBytes {
			t.Errorf("a record with %d rounds takes %d bytes, more than %d", rounds, n, contract.LedgerRecordBytes+rounds*contract.LedgerRoundBytes)
		}
	}
}

// TestLargestShardLosesNoRecord writes the largest shard the CRD allows
// (2000 runs, or 1400 that record their repair rounds), every record with
// its infrastructure error at the cap, into a shard's ledger through the
// runner's own identity (the Role the operator builds), in the sidecar's
// batches of 25. Every record survives, spilled as needed, the runner's
// resume restores all, and the status counts every run exactly once.
func TestLargestShardLosesNoRecord(t *testing.T) {
	cfg := (&framework.Framework{CRDDirs: []string{}}).InitForTest(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(cfg)

	puzzlezoo := func(name string, shards int32, methods ...repotv1.Method) *repotv1.RepotEvaluation {
		e := revtesting.MakeEvaluation(name, "default").Simulated("m", "strong", 1).Suite(repotv1.SuitePuzzleZoo775).Methods(methods...).Shards(shards).Obj()
		e.UID = types.UID(name + "-uid")
		return e
	}
	tests := []struct {
		name   string
		ev     *repotv1.RepotEvaluation
		runs   int
		rounds int
	}{
		// 775 x 5 / 2: 1938 runs per shard, the most the CRD allows.
		{"2000 runs", puzzlezoo("big", 2, repotv1.MethodPoT, repotv1.MethodPoTRetry, repotv1.MethodRePoT, repotv1.MethodAdaptive, repotv1.MethodRePoTNoPrefix), build.MaxRunsPerShard, 0},
		{"1400 runs with 9 rounds each", puzzlezoo("vrr", 3, repotv1.MethodPoT, repotv1.MethodVRR, repotv1.MethodRePoT, repotv1.MethodAdaptive, repotv1.MethodRePoTNoPrefix), build.MaxRoundRunsPerShard, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, m := tt.ev, &tt.ev.Spec.Models[0]
			spills := build.LedgerSpills(e)
			for _, cm := range build.LedgerConfigMaps(e, m) {
				if _, err := admin.CoreV1().ConfigMaps(e.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			store := &ledger.Store{Client: runnerClient(t, ctx, admin, cfg, e).CoreV1().ConfigMaps(e.Namespace), Name: build.LedgerName(e.Name, m.Name, 0), Spills: spills}

			methods := e.Spec.MethodsOrDefault()
			want := make([]contract.Record, tt.runs)
			for i := range want {
				want[i] = maxRecord(m.Name, fmt.Sprintf("pz-%04d", i/len(methods)), string(methods[i%len(methods)]), tt.rounds)
			}
			for i := 0; i < len(want); i += 25 {
				if _, err := store.Merge(ctx, want[i:min(i+25, len(want))]); err != nil {
					t.Fatalf("batch %d: %v", i/25, err)
				}
			}
			// The sidecar's final write offers everything again: nothing
			// changes.
			if n, err := store.Merge(ctx, want); err != nil || n != 0 {
				t.Errorf("merging every record again = %d, %v; want 0, nil", n, err)
			}

			// The operator's reading: every ledger ConfigMap of the
			// evaluation, spills included, found by its labels.
			list, err := admin.CoreV1().ConfigMaps(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: build.LabelEvaluation + "=" + e.Name + "," + build.LabelComponent + "=" + build.ComponentLedger})
			if err != nil {
				t.Fatal(err)
			}
			used := 0
			for _, cm := range list.Items {
				if cm.Data[contract.LedgerRecordsKey] != "" {
					used++
				}
			}
			if used < 2 {
				t.Errorf("%d ledger ConfigMaps hold records; want the shard to have spilled", used)
			}
			got, problems := planning.ReadLedgers(list.Items)
			if len(problems) != 0 {
				t.Errorf("unreadable ledger lines: %v", problems)
			}
			byKey := cmpopts.SortSlices(func(a, b contract.Record) bool { return a.Key() < b.Key() })
			if diff := cmp.Diff(want, got, byKey); diff != "" {
				t.Errorf("records read from the ledgers (-written +read):\n%s", diff)
			}
			res := planning.ComputeResults(e, got)
			// Every run ended in an infrastructure error: none is finished,
			// and the status counts each once among them.
			if res.RunsDone[m.Name] != 0 || res.InfraErrors[m.Name] != tt.runs {
				t.Errorf("status counts %d finished and %d infra-error runs; want 0 and %d, each once", res.RunsDone[m.Name], res.InfraErrors[m.Name], tt.runs)
			}
			infra := 0
			for _, ms := range res.Models[m.Name].Methods {
				infra += ms.InfraErrors
			}
			if infra != tt.runs {
				t.Errorf("the summary counts %d infrastructure errors; want %d, each run once", infra, tt.runs)
			}

			// The runner's resume restores every record.
			path := filepath.Join(t.TempDir(), "records.jsonl")
			if _, err := ledger.Restore(ctx, store, path); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			restored, _, err := contract.ReadRecords(f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, restored, byKey); diff != "" {
				t.Errorf("restored records (-written +restored):\n%s", diff)
			}
		})
	}
}

// runnerClient is a client with the identity of the evaluation's runner
// pods: its ServiceAccount, bound to the Role the operator builds.
func runnerClient(t *testing.T, ctx context.Context, admin *kubernetes.Clientset, cfg *rest.Config, e *repotv1.RepotEvaluation) *kubernetes.Clientset {
	t.Helper()
	ns := e.Namespace
	role := build.RunnerRole(e)
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, build.RunnerRoleBinding(e), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := build.RunnerServiceAccount(e)
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc := rest.AnonymousClientConfig(cfg)
	rc.BearerToken = tr.Status.Token
	return kubernetes.NewForConfigOrDie(rc)
}

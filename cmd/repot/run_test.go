package repot

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/analysis/vrr"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/modelserver/simserver"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/sandbox"
)

func execRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRunCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestRunFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "give --suite NAME or --problems FILE"},
		{[]string{"--suite", "open-source-120", "--methods", "pot,magic"}, `unknown method "magic"`},
		{[]string{"--suite", "open-source-120", "--shard-count", "2", "--shard-index", "2"}, "--shard-index 2 is out of range"},
		{[]string{"--suite", "open-source-120", "--concurrency", "0"}, "--concurrency must be at least 1"},
		{[]string{"--suite", "open-source-120", "--adaptive-threshold-permille", "1001"}, "within 0-1000"},
		{[]string{"--suite", "open-source-120", "--repair-budget", "-1"}, "--repair-budget"},
		{[]string{"--suite", "nope", "--model", "m"}, "nope"},
		{[]string{"--suite", "derail-550", "--model", "m"}, "needs its published file"},
		{[]string{"--suite", "open-source-120", "--temperature", "-0.5"}, "--temperature must be >= 0"},
		{[]string{"--suite", "open-source-120", "--base-url", "127.0.0.1:8000/v1"}, "--base-url \"127.0.0.1:8000/v1\" must be an http(s) URL"},
		{[]string{"--suite", "open-source-120", "--program-timeout", "0s"}, "--program-timeout must be positive"},
		{[]string{"--suite", "open-source-120", "--program-concurrency", "-1"}, "--program-concurrency must be >= 0"},
		{[]string{"--suite", "open-source-120", "--model", "m", "--conditions", "error_only"}, "--conditions applies to --suite derail-550 only"},
		{[]string{"--suite", "open-source-120", "--model", "m", "--checkpoint-statement", "full"}, "--checkpoint-statement applies to --suite derail-550 only"},
	}
	for _, tc := range tests {
		_, err := execRun(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("repot run %v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestRunCommandEndToEnd runs `repot run` on three problems against an
// in-process simulated server, then again with --resume.
func TestRunCommandEndToEnd(t *testing.T) {
	if sb, err := sandbox.NewPython(sandbox.Options{}); err != nil {
		t.Skipf("no python sandbox: %v", err)
	} else {
		sb.Close()
	}
	prof, err := simserver.LookupProfile("strong")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := simserver.New(simserver.Options{Profile: prof, Seed: 1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()

	ps, err := envs.Suite("open-source-120")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "problems.jsonl")
	var buf bytes.Buffer
	if err := writeProblems(&buf, ps[:3]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := []string{"--problems", file, "--base-url", hs.URL + "/v1", "--out", out, "--concurrency", "4", "--model-label", "sim"}
	text, err := execRun(t, args...)
	if err != nil {
		t.Fatalf("repot run: %v\n%s", err, text)
	}
	for _, want := range []string{`using model "sim-strong"`, "METHOD", "repot-adaptive", "COMPARISON", "progress: 12/12 runs", "sandbox sizing: "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s summary.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Models) != 1 || s.Models[0].Model != "sim" || s.Models[0].Problems != 3 || len(s.Models[0].Methods) != 4 {
		t.Errorf("summary: %s", b)
	}
	// The provenance: what the simulated server said of itself and what
	// every request carried (the defaults: temperature 0, max_tokens 16384,
	// thinking off).
	pb, err := os.ReadFile(filepath.Join(out, contract.ProvenanceFile))
	if err != nil {
		t.Fatal(err)
	}
	prov, err := contract.ParseProvenance(pb)
	if err != nil {
		t.Fatal(err)
	}
	if len(prov.ServedModels) != 1 || prov.ServedModels[0].ID != "sim-strong" || prov.ServedModels[0].Root != "repot-simulation/strong" ||
		prov.ServedModels[0].MaxModelLen == nil || prov.ServerError != "" {
		t.Errorf("provenance served models: %s", pb)
	}
	wantReq := map[string]string{"temperature": "0", "max_tokens": "16384", "chat_template_kwargs": `{"enable_thinking":false}`}
	gotReq := map[string]string{}
	for k, v := range prov.Request {
		gotReq[k] = string(v)
	}
	if diff := cmp.Diff(wantReq, gotReq); diff != "" || prov.SystemPrefix != "/no_think" {
		t.Errorf("provenance request (-want +got):\n%s\nsystem prefix %q", diff, prov.SystemPrefix)
	}
	if _, err := execRun(t, args...); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("a second run without --resume: err = %v, want a refusal", err)
	}
	text, err = execRun(t, append(args, "--resume")...)
	if err != nil {
		t.Fatalf("repot run --resume: %v\n%s", err, text)
	}
	if !strings.Contains(text, "12 finished runs already") {
		t.Errorf("resume output:\n%s", text)
	}
	b2, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if !bytes.Equal(b, b2) {
		t.Errorf("resume with nothing left changed summary.json")
	}
	traces, _ := os.ReadFile(filepath.Join(out, "traces.jsonl"))
	if n := bytes.Count(traces, []byte("\n")); n != 12 {
		t.Errorf("traces.jsonl has %d lines, want 12", n)
	}

	// In a runner pod: the ledger-sync sidecar answers that the ledger
	// lacks records, and `repot run` fails (so the pod and its Job retry
	// the shard); when it answers ok, the run succeeds.
	for _, answer := range []string{"failed: ledger full: 2 records do not fit", contract.LedgerSyncedOK} {
		stop := fakeLedgerSidecar(t, out, answer)
		_, err = execRun(t, append(args, "--resume", "--await-ledger=1m")...)
		stop()
		if answer == contract.LedgerSyncedOK && err != nil {
			t.Errorf("repot run --await-ledger with the ledger complete: %v", err)
		}
		if answer != contract.LedgerSyncedOK && (err == nil || !strings.Contains(err.Error(), "ledger full")) {
			t.Errorf("repot run --await-ledger with a ledger that lacks records: err = %v; want the sidecar's answer", err)
		}
		os.Remove(filepath.Join(out, contract.RunDoneFile))
	}
}

// fakeLedgerSidecar answers the runner's done file in dir, as the
// ledger-sync sidecar does, until stop is called.
func fakeLedgerSidecar(t *testing.T, dir, answer string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := os.Stat(filepath.Join(dir, contract.RunDoneFile)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, contract.LedgerSyncedFile), []byte(answer+"\n"), 0o644); err != nil {
					t.Error(err)
				}
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

// TestRunVRRFlags checks that the --vrr-* and --verifier-* flags reach the
// engine options, and that out-of-range values are refused up front.
func TestRunVRRFlags(t *testing.T) {
	cmd, f := newRunCommandFlags()
	if err := cmd.ParseFlags([]string{"--suite", "open-source-120", "--repair-budget", "5",
		"--vrr-tau", "50", "--vrr-votes", "3", "--verifier-false-accept-permille", "100",
		"--verifier-false-reject-permille", "200", "--vrr-calibration-problems", "16",
		"--vrr-min-trials", "4", "--vrr-guard-j-permille", "-1", "--vrr-guard-margin", "2"}); err != nil {
		t.Fatal(err)
	}
	got := f.options()
	want := vrr.Config{Tau: 50, Votes: 3, Noise: vrr.Noise{FalseAcceptPermille: 100, FalseRejectPermille: 200},
		CalibrationProblems: 16, MinTrials: 4, GuardJPermille: -1, GuardMargin: 2}
	if got.VRR != want || got.RepairBudget != 5 {
		t.Errorf("options: VRR %+v RepairBudget %d, want %+v and 5", got.VRR, got.RepairBudget, want)
	}
	for _, name := range []string{"vrr-tau", "vrr-votes", "verifier-false-accept-permille", "verifier-false-reject-permille",
		"vrr-calibration-problems", "vrr-min-trials", "vrr-guard-j-permille", "vrr-guard-margin"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("repot run has no --%s", name)
		}
	}
	if d := (&runFlags{}).options().VRR; d != (vrr.Config{}) {
		t.Errorf("no flags: VRR %+v, want zero (engine defaults)", d)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--verifier-false-accept-permille", "1001"}},
		{[]string{"--vrr-votes", "100"}},
		{[]string{"--vrr-guard-j-permille", "-2"}},
		{[]string{"--vrr-tau", "-1"}},
	} {
		_, err := execRun(t, append([]string{"--suite", "open-source-120", "--model", "m"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), "--vrr-* / --verifier-*") {
			t.Errorf("repot run %v: err = %v, want a refusal naming the flags", tc.args, err)
		}
	}
}

// TestOperatorVRRArgsReachOptions parses the arguments the operator gives a
// runner of an evaluation with spec.vrr (controllers/build.RunArgs) with
// repot run's flags: every field set reaches Options.VRR, so the flag names
// of the two sides cannot drift apart.
func TestOperatorVRRArgsReachOptions(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).
		Methods(repotv1.MethodRePoT, repotv1.MethodVRR).RepairBudget(5).VRR(repotv1.VRRSpec{
		Tau: ptr.To[int32](50), Votes: ptr.To[int32](3),
		VerifierNoise:       &repotv1.VerifierNoiseSpec{FalseAcceptPermille: ptr.To[int32](100), FalseRejectPermille: ptr.To[int32](200)},
		CalibrationProblems: ptr.To[int32](16), MinTrials: ptr.To[int32](4),
		GuardJPermille: ptr.To[int32](-1), GuardMargin: ptr.To[int32](2),
	}).Obj()
	args := build.RunArgs(ev, &ev.Spec.Models[0])
	if args[0] != "run" {
		t.Fatalf("args %q do not start with run", args)
	}
	args = slices.Clone(args[1:])
	for i, a := range args { // the Job fills in the shard index
		args[i] = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", "0")
	}
	cmd, f := newRunCommandFlags()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("repot run refuses the operator's args %q: %v", args, err)
	}
	if err := f.check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	want := vrr.Config{Tau: 50, Votes: 3, Noise: vrr.Noise{FalseAcceptPermille: 100, FalseRejectPermille: 200},
		CalibrationProblems: 16, MinTrials: 4, GuardJPermille: -1, GuardMargin: 2}
	if got := f.options(); got.VRR != want || got.RepairBudget != 5 {
		t.Errorf("options: VRR %+v RepairBudget %d, want %+v and 5", got.VRR, got.RepairBudget, want)
	}
}

// TestOperatorBaselineArgsReachOptions parses the arguments the operator
// gives a runner of an evaluation with spec.selfConsistency and spec.vex:
// every field set reaches Options, and the environments not named keep the
// paper's settings.
func TestOperatorBaselineArgsReachOptions(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).
		Methods(repotv1.MethodCoT, repotv1.MethodSelfConsistency, repotv1.MethodVEX).SelfConsistencySamples(3).
		VEX(repotv1.VEXSpec{MaxLLMCalls: ptr.To[int32](5), Environments: []repotv1.VEXEnvironmentSpec{
			{Environment: "river_crossing", ChunkSize: ptr.To[int32](4), Proposer: repotv1.VEXProposerCode},
			{Environment: "tower_of_hanoi", ChunkSize: ptr.To[int32](50)},
		}}).Obj()
	args := build.RunArgs(ev, &ev.Spec.Models[0])
	args = slices.Clone(args[1:])
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", "0")
	}
	cmd, f := newRunCommandFlags()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("repot run refuses the operator's args %q: %v", args, err)
	}
	if err := f.check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	got := f.options()
	want := methods.DefaultOptions().VEX
	want.MaxLLMCalls = 5
	want.ChunkSize["river_crossing"], want.Proposer["river_crossing"] = 4, methods.ProposerCode
	want.ChunkSize["tower_of_hanoi"] = 50
	if diff := cmp.Diff(want, got.VEX); diff != "" || got.SelfConsistencySamples != 3 {
		t.Errorf("options: self-consistency samples %d (want 3), VEX (-want +got):\n%s", got.SelfConsistencySamples, diff)
	}
}

// TestBaselineFlagsRefuseBadValues: each bad baseline flag is refused with
// a message naming it.
func TestBaselineFlagsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"--self-consistency-samples", "0"}},
		{[]string{"--vex-max-llm-calls", "0"}},
		{[]string{"--vex-chunk-size", "hanoi=3"}},
		{[]string{"--vex-chunk-size", "tower_of_hanoi=-1"}},
		{[]string{"--vex-chunk-size", "tower_of_hanoi"}},
		{[]string{"--vex-proposer", "blocksworld=python"}},
	} {
		_, err := execRun(t, append([]string{"--suite", "open-source-120", "--model", "m"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.args[0]) {
			t.Errorf("repot run %v: err = %v, want a refusal naming %s", tc.args, err, tc.args[0])
		}
	}
}

package schedule_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/integration/framework"
	"repot.dev/repot-operator/controllers/schedule"
)

// These tests run the schedule controller against a real kube-apiserver and
// etcd (envtest) with a fake clock. Only the schedule controller runs: the
// tests play the evaluation controller and the runners, marking runs
// Complete or Failed and writing their ledgers. The outcomes they write are
// a stand-in derived from the model's simulated profile (see outcome), not
// the output of a model.

var (
	// cfg is the admin's (the tests' own client); managerCfg is the
	// operator's ServiceAccount with only the RBAC the project ships.
	cfg        *rest.Config
	managerCfg *rest.Config
	k8s        client.Client
	scheme     *runtime.Scheme
	clk        *clocktesting.FakeClock
	stopFn     func()
	skipWhy    string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// A fuzzing run (and each of its workers, which run TestMain too) needs
	// no API server.
	flag.Parse()
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		skipWhy = "fuzzing: the API-server tests do not run"
		return m.Run()
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		skipWhy = "fuzzing: the API-server tests do not run"
		return m.Run()
	}
	env := &framework.Framework{}
	var err error
	if cfg, err = env.Init(); errors.Is(err, framework.ErrBinariesMissing) {
		skipWhy = err.Error() + " (the schedule controller tests)"
		return m.Run()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() { _ = env.Teardown() }()
	scheme = runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = repotv1.AddToScheme(scheme)
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if managerCfg, err = env.ConfigAsShippedManager(context.Background(), "repot-operator-manager"); err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	clk = clocktesting.NewFakeClock(time.Now())
	if err := startManager(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	defer func() { stopFn() }()
	return m.Run()
}

// startManager starts a manager with the schedule controller only.
func startManager() error { return startManagerWithClient(nil) }

// startManagerWithClient is startManager whose manager's (cached) client
// wrapClient wraps, so that a test can make the cache lag.
func startManagerWithClient(wrapClient func(client.Client) client.Client) error {
	mo := ctrl.Options{Scheme: scheme, NewClient: framework.WrappedClient(wrapClient)}
	m, err := framework.StartManager(managerCfg, mo, func(ctx context.Context, mgr ctrl.Manager) error {
		return schedule.SetupWithManager(ctx, mgr, schedule.Options{Clock: clk})
	})
	if err != nil {
		return err
	}
	stopFn = func() { _ = m.Stop() }
	return nil
}

// restart stops the operator, runs meanwhile, and starts a fresh one.
func restart(meanwhile func()) {
	stopFn()
	meanwhile()
	if err := startManager(); err != nil {
		panic(err)
	}
}

func requireEnvtest(t *testing.T) *WithT {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(20 * time.Second)
	g.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	return g
}

func newNamespace(g *WithT) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sched-"}}
	g.Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// makeSchedule builds a schedule over simulated models (name=profile).
func makeSchedule(ns, name, cron string, policy repotv1.ConcurrencyPolicy, models ...string) *repotv1.RepotSchedule {
	w := revtesting.MakeEvaluation("x", ns)
	for i := 0; i+1 < len(models); i += 2 {
		w = w.Simulated(models[i], models[i+1], 1)
	}
	w = w.Shards(1)
	return &repotv1.RepotSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: repotv1.RepotScheduleSpec{
			Schedule: cron, ConcurrencyPolicy: policy, Suspend: ptr.To(true),
			EvaluationTemplate: repotv1.EvaluationTemplate{
				Labels: []repotv1.MetadataEntry{{Key: "team", Value: "bench"}},
				Spec:   w.Obj().Spec,
			},
		},
	}
}

// start creates a schedule suspended, sets the fake clock to its creation
// time and resumes it, so that simulated minutes count from its creation.
func start(g *WithT, s *repotv1.RepotSchedule) time.Time {
	ctx := context.Background()
	g.Expect(k8s.Create(ctx, s)).To(Succeed())
	created := s.CreationTimestamp.Time
	clk.SetTime(created)
	patchSpec(g, s, func(sp *repotv1.RepotScheduleSpec) { sp.Suspend = ptr.To(false) })
	return created
}

func patchSpec(g *WithT, s *repotv1.RepotSchedule, f func(*repotv1.RepotScheduleSpec)) {
	g.Eventually(func() error {
		var cur repotv1.RepotSchedule
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), &cur); err != nil {
			return err
		}
		f(&cur.Spec)
		return k8s.Update(context.Background(), &cur)
	}).Should(Succeed())
}

// stepTo moves the fake clock, pokes the schedule so that it reconciles,
// and waits until the pass that saw the new time wrote its status.
func stepTo(g *WithT, s *repotv1.RepotSchedule, now time.Time) {
	clk.SetTime(now)
	ctx := context.Background()
	g.Eventually(func() error {
		var cur repotv1.RepotSchedule
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), &cur); err != nil {
			return err
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations["test.repot.dev/now"] = now.UTC().Format(time.RFC3339Nano)
		return k8s.Update(ctx, &cur)
	}).Should(Succeed())
	next := now.Truncate(5 * time.Minute).Add(5 * time.Minute)
	g.Eventually(func(g Gomega) {
		cur := getSchedule(g, s)
		g.Expect(cur.Status.NextScheduleTime).NotTo(BeNil())
		g.Expect(cur.Status.NextScheduleTime.Time.Equal(next)).To(BeTrue(), "nextScheduleTime %v, want %v", cur.Status.NextScheduleTime, next)
	}).Should(Succeed())
}

func getSchedule(g Gomega, s *repotv1.RepotSchedule) *repotv1.RepotSchedule {
	var cur repotv1.RepotSchedule
	g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(s), &cur)).To(Succeed())
	return &cur
}

// runs lists the schedule's runs by name.
func runs(g Gomega, ns string) []string {
	var l repotv1.RepotEvaluationList
	g.Expect(k8s.List(context.Background(), &l, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range l.Items {
		if e.DeletionTimestamp == nil {
			out = append(out, e.Name)
		}
	}
	return out
}

// boundaries are the */5 times in (from, to].
func boundaries(from, to time.Time) []time.Time {
	var out []time.Time
	for t := from.Truncate(5 * time.Minute).Add(5 * time.Minute); !t.After(to); t = t.Add(5 * time.Minute) {
		out = append(out, t)
	}
	return out
}

func name(s string, t time.Time) string { return fmt.Sprintf("%s-%d", s, t.Unix()/60) }

// outcome is the test's stand-in for a runner: whether a simulated model of
// the profile solves problem i with the method. The strong profile solves 6
// problems in 10 with pot, 7 with pot-retry and 8 with repot and
// repot-adaptive; the weak one differs only in repot, down to 6 in 10.
func outcome(profile string, method string, i int) bool {
	rate := map[string]int{"pot": 6, "pot-retry": 7, "repot": 8, "repot-adaptive": 8}[method]
	if profile == "weak" && method == "repot" {
		rate = 6
	}
	return i%10 < rate
}

// finish plays the evaluation controller and the runners: it writes a
// ledger of 120 problems per model for the run's methods (outcomes from
// each model's profile) and marks the run Complete or Failed.
func finish(g *WithT, ns, run string, result repotv1.RunResult) {
	ctx := context.Background()
	var e repotv1.RepotEvaluation
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: run}, &e)).To(Succeed())
	for _, m := range e.Spec.Models {
		var lines []string
		for i := 0; i < 120; i++ {
			for _, method := range e.Spec.MethodsOrDefault() {
				r := contract.Record{Model: m.Name, ProblemID: fmt.Sprintf("p%03d", i), Method: string(method),
					Environment: "tower_of_hanoi", Success: outcome(m.Simulated.Profile, string(method), i), Calls: 1}
				b, err := json.Marshal(r)
				g.Expect(err).NotTo(HaveOccurred())
				lines = append(lines, string(b))
			}
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				// The name the operator builds: a comparison reads only
				// those (planning.ExpectedLedgers).
				Name: build.LedgerName(run, m.Name, 0), Namespace: ns,
				Labels: map[string]string{"repot.dev/evaluation": run, "repot.dev/component": "ledger",
					"repot.dev/model": m.Name, "app.kubernetes.io/managed-by": "repot-operator"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&e, repotv1.GroupVersion.WithKind("RepotEvaluation"))},
			},
			Data: map[string]string{"records.jsonl": strings.Join(lines, "\n") + "\n"},
		}
		g.Expect(k8s.Create(ctx, cm)).To(Succeed())
	}
	now := metav1.NewTime(clk.Now())
	typ := repotv1.ConditionComplete
	if result == repotv1.RunFailed {
		typ = repotv1.ConditionFailed
	}
	e.Status.CompletionTime = &now
	e.Status.Conditions = []metav1.Condition{{Type: typ, Status: metav1.ConditionTrue, Reason: "Test", Message: "played by the test", LastTransitionTime: now}}
	for _, m := range e.Spec.Models {
		// The provenance as the evaluation controller records it: the
		// server arguments it rendered, and the runner's report of the
		// temperature it sent.
		prov := &repotv1.ModelProvenance{ServerArgs: build.ServerArgs(&m),
			Sampling: []repotv1.NameValue{{Name: "temperature", Value: e.Spec.TemperatureOrDefault()}}}
		e.Status.Models = append(e.Status.Models, repotv1.ModelStatus{Name: m.Name, Provenance: prov,
			Methods: []repotv1.MethodResult{{Method: repotv1.MethodPoT, Rate: "60.0%", RatePermille: 600}}})
	}
	g.Expect(k8s.Status().Update(ctx, &e)).To(Succeed())
}

func condition(s *repotv1.RepotSchedule, typ string) metav1.Condition {
	for _, c := range s.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

func TestEveryFiveMinutesForThirtyMinutesMakesSixRuns(t *testing.T) {
	g := requireEnvtest(t)
	ns := newNamespace(g)
	s := makeSchedule(ns, "every5", "*/5 * * * *", repotv1.ConcurrencyAllow, "m", "strong")
	t0 := start(g, s)
	var want []string
	for minute := 1; minute <= 30; minute++ {
		now := t0.Add(time.Duration(minute) * time.Minute)
		stepTo(g, s, now)
		want = want[:0]
		for _, b := range boundaries(t0, now) {
			want = append(want, name("every5", b))
		}
		g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(want), "at minute %d", minute)
	}
	g.Expect(want).To(HaveLen(6))
	// Each run carries the template's labels, the schedule label, and the
	// schedule as its controlling owner.
	var e repotv1.RepotEvaluation
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: want[0]}, &e)).To(Succeed())
	g.Expect(e.Labels).To(HaveKeyWithValue("team", "bench"))
	g.Expect(e.Labels).To(HaveKeyWithValue(schedule.LabelSchedule, "every5"))
	g.Expect(metav1.GetControllerOf(&e)).NotTo(BeNil())
	cur := getSchedule(g, s)
	g.Expect(cur.Status.ActiveCount).To(Equal(int32(6)))
	g.Expect(cur.Status.MissedRuns).To(Equal(int32(0)))
}

func TestConcurrencyPolicies(t *testing.T) {
	for _, policy := range []repotv1.ConcurrencyPolicy{repotv1.ConcurrencyForbid, repotv1.ConcurrencyReplace, repotv1.ConcurrencyAllow} {
		t.Run(string(policy), func(t *testing.T) {
			g := requireEnvtest(t)
			ns := newNamespace(g)
			sname := "cp-" + strings.ToLower(string(policy))
			s := makeSchedule(ns, sname, "*/5 * * * *", policy, "m", "strong")
			t0 := start(g, s)
			b := boundaries(t0, t0.Add(16*time.Minute))
			stepTo(g, s, b[0])
			g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name(sname, b[0])))
			// The first run is still active when the second is due.
			stepTo(g, s, b[1])
			switch policy {
			case repotv1.ConcurrencyForbid:
				g.Consistently(func(g Gomega) []string { return runs(g, ns) }, time.Second).Should(ConsistOf(name(sname, b[0])))
				g.Expect(getSchedule(g, s).Status.MissedRuns).To(Equal(int32(1)))
				// Once it finished, the next window runs.
				finish(g, ns, name(sname, b[0]), repotv1.RunComplete)
				stepTo(g, s, b[2])
				g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name(sname, b[0]), name(sname, b[2])))
			case repotv1.ConcurrencyReplace:
				g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name(sname, b[1])))
			case repotv1.ConcurrencyAllow:
				g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name(sname, b[0]), name(sname, b[1])))
				g.Eventually(func(g Gomega) int32 { return getSchedule(g, s).Status.ActiveCount }).Should(Equal(int32(2)))
			}
		})
	}
}

func TestHistoryLimitsPrune(t *testing.T) {
	g := requireEnvtest(t)
	ns := newNamespace(g)
	s := makeSchedule(ns, "limits", "*/5 * * * *", repotv1.ConcurrencyForbid, "m", "strong")
	s.Spec.SuccessfulHistoryLimit, s.Spec.FailedHistoryLimit = ptr.To[int32](2), ptr.To[int32](1)
	t0 := start(g, s)
	results := []repotv1.RunResult{repotv1.RunComplete, repotv1.RunFailed, repotv1.RunComplete, repotv1.RunFailed, repotv1.RunComplete}
	bs := boundaries(t0, t0.Add(26*time.Minute))
	for i, r := range results {
		stepTo(g, s, bs[i])
		g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ContainElement(name("limits", bs[i])))
		finish(g, ns, name("limits", bs[i]), r)
		g.Eventually(func(g Gomega) int { return len(getSchedule(g, s).Status.History) }).Should(Equal(i + 1))
	}
	stepTo(g, s, bs[4].Add(time.Minute))
	// Kept: the 2 newest complete (runs 2 and 4) and the newest failed (run 3).
	g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(
		name("limits", bs[2]), name("limits", bs[3]), name("limits", bs[4])))
	cur := getSchedule(g, s)
	g.Expect(cur.Status.History).To(HaveLen(5), "the status history outlives pruned runs")
	g.Expect(cur.Status.LastResult).To(Equal(repotv1.RunComplete))
}

func TestMissedWindowsAfterRestart(t *testing.T) {
	g := requireEnvtest(t)
	ns := newNamespace(g)
	s := makeSchedule(ns, "restart", "*/5 * * * *", repotv1.ConcurrencyAllow, "m", "strong")
	t0 := start(g, s)
	bs := boundaries(t0, t0.Add(60*time.Minute))
	stepTo(g, s, bs[0])
	g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name("restart", bs[0])))

	// The operator is down while three windows pass: on restart only the
	// most recent one runs, the two before it count as missed (CronJob).
	down := bs[3].Add(2 * time.Minute)
	restart(func() { clk.SetTime(down) })
	stepTo(g, s, down)
	g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name("restart", bs[0]), name("restart", bs[3])))
	g.Expect(getSchedule(g, s).Status.MissedRuns).To(Equal(int32(2)))

	// With startingDeadlineSeconds 60, a window missed by two minutes does
	// not run at all.
	patchSpec(g, s, func(sp *repotv1.RepotScheduleSpec) { sp.StartingDeadlineSeconds = ptr.To[int64](60) })
	late := bs[5].Add(2 * time.Minute)
	restart(func() { clk.SetTime(late) })
	stepTo(g, s, late)
	g.Consistently(func(g Gomega) []string { return runs(g, ns) }, time.Second).Should(ConsistOf(name("restart", bs[0]), name("restart", bs[3])))
	g.Expect(getSchedule(g, s).Status.MissedRuns).To(Equal(int32(4)))
	g.Expect(getSchedule(g, s).Status.LastScheduleTime.Time.Equal(bs[5])).To(BeTrue())
}

func TestWeakerModelSetsRegressed(t *testing.T) {
	g := requireEnvtest(t)
	ns := newNamespace(g)
	s := makeSchedule(ns, "regress", "*/5 * * * *", repotv1.ConcurrencyForbid, "steady", "strong", "sim", "strong")
	t0 := start(g, s)
	bs := boundaries(t0, t0.Add(11*time.Minute))
	stepTo(g, s, bs[0])
	g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name("regress", bs[0])))
	finish(g, ns, name("regress", bs[0]), repotv1.RunComplete)
	g.Eventually(func(g Gomega) string { return condition(getSchedule(g, s), repotv1.ConditionRegressed).Reason }).Should(Equal(repotv1.ReasonNoBaseline))

	// Git changes the template: model sim becomes the weak profile. The
	// run that already exists keeps its spec; the next run gets the new one.
	// It also raises the sampling temperature.
	patchSpec(g, s, func(sp *repotv1.RepotScheduleSpec) {
		sp.EvaluationTemplate.Spec.Models[1].Simulated.Profile = "weak"
		sp.EvaluationTemplate.Spec.Sampling = &repotv1.SamplingSpec{Temperature: "0.7"}
	})
	stepTo(g, s, bs[1])
	g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name("regress", bs[0]), name("regress", bs[1])))
	var first, second repotv1.RepotEvaluation
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name("regress", bs[0])}, &first)).To(Succeed())
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name("regress", bs[1])}, &second)).To(Succeed())
	g.Expect(first.Spec.Models[1].Simulated.Profile).To(Equal("strong"))
	g.Expect(second.Spec.Models[1].Simulated.Profile).To(Equal("weak"))
	finish(g, ns, name("regress", bs[1]), repotv1.RunComplete)

	g.Eventually(func(g Gomega) metav1.ConditionStatus {
		return condition(getSchedule(g, s), repotv1.ConditionRegressed).Status
	}).Should(Equal(metav1.ConditionTrue))
	cur := getSchedule(g, s)
	msg := condition(cur, repotv1.ConditionRegressed).Message
	g.Expect(msg).To(ContainSubstring("model sim, method repot: -20.0 points"))
	drop, _, _ := strings.Cut(msg, "; the runs differ")
	g.Expect(drop).NotTo(ContainSubstring("model steady"))
	g.Expect(drop).NotTo(ContainSubstring("method pot:"))
	h := cur.Status.History[0]
	g.Expect(h.Name).To(Equal(name("regress", bs[1])))
	g.Expect(h.ComparedWith).To(Equal(name("regress", bs[0])))
	var drops []string
	for _, c := range h.Comparisons {
		if c.SignificantDrop {
			drops = append(drops, c.Model+"/"+string(c.Method))
		}
	}
	g.Expect(drops).To(ConsistOf("sim/repot"))
	// Next to the McNemar results, the history says what else differed:
	// the weaker profile in sim's server arguments and the temperature of
	// both models.
	g.Expect(h.Differences).To(ConsistOf(
		"model steady: sampling temperature: 0 -> 0.7",
		ContainSubstring("model sim: server args: repot sim-server"),
		"model sim: sampling temperature: 0 -> 0.7",
	))
	g.Expect(h.Differences[1]).To(And(ContainSubstring("--profile strong"), ContainSubstring("-> repot sim-server"), HaveSuffix("--fault-permille 0")))
	g.Expect(msg).To(ContainSubstring("the runs differ in more than time: model steady: sampling temperature: 0 -> 0.7"))
	for _, c := range h.Comparisons {
		if c.Model == "sim" && c.Method == repotv1.MethodRePoT {
			g.Expect(c.PValue).To(Equal("<0.0001"))
			g.Expect(c.BaselineOnlySolved).To(Equal(int32(24)))
		}
	}
	assessLive(g, s, "RepotSchedule", "Regressed", "Degraded", "Current")
}

// ledgerlessCache is a manager client whose lists of ConfigMaps find none:
// an informer cache that has not yet seen the ledgers a run's runners
// confirmed before its Complete status arrived.
type ledgerlessCache struct{ client.Client }

func (c ledgerlessCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if cms, ok := list.(*corev1.ConfigMapList); ok {
		cms.Items = nil
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}

// TestComparisonReadsLedgersAsStored: a comparison is computed once and kept
// as history, so it reads the runs' ledgers from the API server, not from a
// cache that may not hold their last records yet.
func TestComparisonReadsLedgersAsStored(t *testing.T) {
	g := requireEnvtest(t)
	stopFn()
	if err := startManagerWithClient(func(c client.Client) client.Client { return ledgerlessCache{c} }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restart(func() {}) })
	ns := newNamespace(g)
	s := makeSchedule(ns, "stored", "*/5 * * * *", repotv1.ConcurrencyForbid, "sim", "strong")
	t0 := start(g, s)
	bs := boundaries(t0, t0.Add(11*time.Minute))
	stepTo(g, s, bs[0])
	g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name("stored", bs[0])))
	finish(g, ns, name("stored", bs[0]), repotv1.RunComplete)
	stepTo(g, s, bs[1])
	g.Eventually(func(g Gomega) []string { return runs(g, ns) }).Should(ConsistOf(name("stored", bs[0]), name("stored", bs[1])))
	finish(g, ns, name("stored", bs[1]), repotv1.RunComplete)
	g.Eventually(func(g Gomega) []repotv1.ScheduledRun { return getSchedule(g, s).Status.History }).Should(HaveLen(2))
	h := getSchedule(g, s).Status.History[0]
	g.Expect(h.ComparedWith).To(Equal(name("stored", bs[0])))
	g.Expect(h.Comparisons).NotTo(BeEmpty(), "the comparison found no records")
	for _, c := range h.Comparisons {
		g.Expect(c.Problems).To(Equal(int32(120)), "%s/%s compared on %d problems, want all 120", c.Model, c.Method, c.Problems)
	}
}

package integration_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// Helpers that play the parts envtest lacks: the Deployment and Job
// controllers, the scheduler and the kubelet, and the runner's ledger
// sidecar.

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// createNamespace makes a fresh namespace for one spec.
func createNamespace(prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func getEval(ns, name string) *repotv1.RepotEvaluation {
	var e repotv1.RepotEvaluation
	ExpectWithOffset(1, k8s.Get(ctx, key(ns, name), &e)).To(Succeed())
	return &e
}

// eventuallyEval waits until f holds for the evaluation.
func eventuallyEval(ns, name string, f func(g Gomega, e *repotv1.RepotEvaluation)) {
	EventuallyWithOffset(1, func(g Gomega) {
		var e repotv1.RepotEvaluation
		g.Expect(k8s.Get(ctx, key(ns, name), &e)).To(Succeed())
		f(g, &e)
	}).Should(Succeed())
}

// model is status.models[i] inside an Eventually: until the controller has
// written that entry the poll fails and is retried (indexing it would
// panic, and Gomega does not retry a panic).
func model(g Gomega, e *repotv1.RepotEvaluation, i int) *repotv1.ModelStatus {
	g.ExpectWithOffset(1, len(e.Status.Models)).To(BeNumerically(">", i), "status.models[%d] is not written yet", i)
	return &e.Status.Models[i]
}

func condition(e *repotv1.RepotEvaluation, t string) metav1.Condition {
	for _, c := range e.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return metav1.Condition{}
}

// eventReasons lists the type/reason of each event about object name in
// ns, for Eventually.
func eventReasons(ns, name string) func(g Gomega) []string {
	return func(g Gomega) []string {
		var evs eventsv1.EventList
		g.Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range evs.Items {
			if e.Regarding.Name == name {
				reasons = append(reasons, e.Type+"/"+e.Reason)
			}
		}
		return reasons
	}
}

// expectDeadlineBetween steps the clock by before and sees evaluation ev
// of ns not failed, then by after and sees it Failed with DeadlineExceeded
// (activeDeadlineSeconds ends between the two).
func expectDeadlineBetween(ns string, before, after time.Duration) {
	GinkgoHelper()
	clk.Step(before)
	poke(ns, "ev")
	Consistently(func(g Gomega) {
		g.Expect(condition(getEval(ns, "ev"), repotv1.ConditionFailed).Status).NotTo(Equal(metav1.ConditionTrue))
	}, "500ms").Should(Succeed())
	clk.Step(after)
	poke(ns, "ev")
	eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
		c := condition(e, repotv1.ConditionFailed)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(repotv1.ReasonDeadlineExceeded))
		g.Expect(c.ObservedGeneration).To(Equal(e.Generation))
	})
}

// poke changes an annotation so that the controller reconciles now (after
// the fake clock moved).
func poke(ns, name string) {
	e := getEval(ns, name)
	p := client.MergeFrom(e.DeepCopy())
	if e.Annotations == nil {
		e.Annotations = map[string]string{}
	}
	e.Annotations["test.repot.dev/poke"] = fmt.Sprint(time.Now().UnixNano())
	ExpectWithOffset(1, k8s.Patch(ctx, e, p)).To(Succeed())
}

// setSuspend patches spec.suspend.
func setSuspend(ns, name string, v bool) {
	e := getEval(ns, name)
	p := client.MergeFrom(e.DeepCopy())
	e.Spec.Suspend = ptr.To(v)
	ExpectWithOffset(1, k8s.Patch(ctx, e, p)).To(Succeed())
}

// setServerReady plays the Deployment controller: readyReplicas follows the
// readiness sidecar of the (imagined) pod.
func setServerReady(ns, eval, model string, ready bool) {
	EventuallyWithOffset(1, func() error {
		var d appsv1.Deployment
		if err := k8s.Get(ctx, key(ns, build.ServerName(eval, model)), &d); err != nil {
			return err
		}
		n := int32(0)
		if ready {
			n = 1
		}
		d.Status.ObservedGeneration = d.Generation
		d.Status.Replicas, d.Status.UpdatedReplicas = ptr.Deref(d.Spec.Replicas, 1), ptr.Deref(d.Spec.Replicas, 1)
		d.Status.ReadyReplicas, d.Status.AvailableReplicas = n, n
		if d.Status.Replicas < n {
			d.Status.Replicas, d.Status.UpdatedReplicas = n, n
		}
		return k8s.Status().Update(ctx, &d)
	}).Should(Succeed())
}

// finishJob plays the Job controller: every index (or pod) succeeded.
func finishJob(ns, name string) {
	EventuallyWithOffset(1, func() error {
		var j batchv1.Job
		if err := k8s.Get(ctx, key(ns, name), &j); err != nil {
			return err
		}
		n := ptr.Deref(j.Spec.Completions, 1)
		now := metav1.Now()
		if j.Status.StartTime == nil { // immutable once set
			start := metav1.NewTime(now.Add(-time.Minute))
			j.Status.StartTime = &start
		}
		j.Status.CompletionTime = &now
		j.Status.Succeeded = n
		j.Status.Active, j.Status.Ready = 0, ptr.To[int32](0)
		j.Status.Terminating = ptr.To[int32](0)
		j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
		switch {
		case ptr.Deref(j.Spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion:
			// The store probe and cleanup Jobs have no indexes.
		case n == 1:
			j.Status.CompletedIndexes = "0"
		default:
			j.Status.CompletedIndexes = fmt.Sprintf("0-%d", n-1)
		}
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
		}
		return k8s.Status().Update(ctx, &j)
	}).Should(Succeed())
}

// createServerPod plays the ReplicaSet controller and the scheduler: a pod
// of the model's server with the given status.
func createServerPod(ns, eval, model string, status corev1.PodStatus) {
	var d appsv1.Deployment
	ExpectWithOffset(1, k8s.Get(ctx, key(ns, build.ServerName(eval, model)), &d)).To(Succeed())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-7d9f-x2k4", Namespace: ns, Labels: d.Spec.Template.Labels},
		Spec:       *d.Spec.Template.Spec.DeepCopy(),
	}
	ExpectWithOffset(1, k8s.Create(ctx, pod)).To(Succeed())
	pod.Status = status
	ExpectWithOffset(1, k8s.Status().Update(ctx, pod)).To(Succeed())
}

// writeLedger plays the ledger sidecar: it replaces a ledger's records.
func writeLedger(ns, name string, recs ...contract.Record) {
	var lines []string
	for _, r := range recs {
		b, err := json.Marshal(r)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		lines = append(lines, string(b))
	}
	EventuallyWithOffset(1, func() error {
		var cm corev1.ConfigMap
		if err := k8s.Get(ctx, key(ns, name), &cm); err != nil {
			return err
		}
		cm.Data = map[string]string{contract.LedgerRecordsKey: strings.Join(lines, "\n") + "\n"}
		return k8s.Update(ctx, &cm)
	}).Should(Succeed())
}

// exists reports whether an object exists.
func exists(obj client.Object, ns, name string) func() bool {
	return func() bool {
		err := k8s.Get(ctx, key(ns, name), obj)
		if err != nil && !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		return err == nil
	}
}

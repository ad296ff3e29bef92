package planning

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// Bounds of status.models[].provenance (the CRD's maxItems and maxLength).
const (
	maxProvenanceImages = 16
	maxProvenanceArgs   = 64
	maxProvenanceArg    = 1024
	maxServedModels     = 8
	maxNameValues       = 16
	maxNameValueValue   = 256
)

// chatTemplateKwargsField is the request field whose object is recorded as
// provenance.chatTemplateKwargs rather than as a sampling parameter.
const chatTemplateKwargsField = "chat_template_kwargs"

// modelProvenance is status.models[].provenance for model m: the server
// arguments and operator build recorded when the server was created
// (recordedServer), the revision from the spec, the images its server and
// runner pods report (kept from prev once the pods are gone), and what its
// runners reported on their ledgers. It is nil while there is nothing to
// record.
func modelProvenance(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, w *World, prev *repotv1.ModelProvenance) *repotv1.ModelProvenance {
	p := &repotv1.ModelProvenance{}
	args, version, commit := recordedServer(e, m, w, prev)
	if len(args) > 0 {
		if len(args) > maxProvenanceArgs {
			args = args[:maxProvenanceArgs]
		}
		p.ServerArgs = make([]string, len(args))
		for i, a := range args {
			p.ServerArgs[i] = Truncate(a, maxProvenanceArg)
		}
	}
	p.OperatorVersion, p.OperatorCommit = Truncate(version, 128), Truncate(commit, 64)
	if m.VLLM != nil {
		p.Revision = m.VLLM.Revision
	}
	var prevImages []repotv1.ContainerImage
	if prev != nil {
		prevImages = prev.Images
	}
	p.Images = podImages(prevImages, w.serverPods(e.Name, m.Name), modelPods(w.RunnerPods, e.Name, m.Name))
	if rp, ok := runnerProvenance(w.Ledgers, m.Name); ok {
		applyRunnerProvenance(p, rp)
	}
	if p.Images == nil && p.ServerArgs == nil && p.Revision == "" && p.ServedModels == nil && p.ServerReportError == "" &&
		p.Sampling == nil && p.ChatTemplateKwargs == nil && p.RepotVersion == "" && p.RepotCommit == "" &&
		p.OperatorVersion == "" && p.OperatorCommit == "" {
		return nil
	}
	return p
}

// recordedServer is the server command and the operator build of model m as
// recorded when its server was created: read from the server Deployment
// while it exists (its server container, build.DeploymentServerArgs; the
// build annotations), else kept from prev. An endpoint model has no server:
// its operator build is its runner Job's, else prev's. Nothing is derived
// from the current builders, so an operator upgrade that renders servers
// differently rewrites neither an evaluation in flight nor a finished one.
func recordedServer(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, w *World, prev *repotv1.ModelProvenance) (args []string, version, commit string) {
	if build.HasServer(m) {
		if d := w.deployment(build.ServerName(e.Name, m.Name)); d != nil {
			version, commit = build.CreatedByOperator(d)
			return build.DeploymentServerArgs(d), version, commit
		}
	} else if j := w.job(build.RunnerJobName(e.Name, m.Name)); j != nil {
		version, commit = build.CreatedByOperator(j)
		return nil, version, commit
	}
	if prev == nil {
		return nil, "", ""
	}
	return prev.ServerArgs, prev.OperatorVersion, prev.OperatorCommit
}

// modelPods are the pods of one model of one evaluation.
func modelPods(pods []corev1.Pod, eval, model string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.Labels[build.LabelEvaluation] == eval && p.Labels[build.LabelModel] == model {
			out = append(out, p)
		}
	}
	return out
}

// podImages merges the resolved images the pods report (init containers
// included) into prev, one entry per pod role and container name: a
// container that reported an imageID replaces the earlier entry, the pods
// taken oldest first so that the newest pod wins; entries whose pods are
// gone stay. Sorted by role and container, at most maxProvenanceImages.
func podImages(prev []repotv1.ContainerImage, server, runners []corev1.Pod) []repotv1.ContainerImage {
	type key struct{ pod, container string }
	byKey := map[key]repotv1.ContainerImage{}
	for _, c := range prev {
		byKey[key{c.Pod, c.Container}] = c
	}
	add := func(role string, pods []corev1.Pod) {
		pods = slices.Clone(pods)
		sort.SliceStable(pods, func(i, j int) bool {
			a, b := pods[i].CreationTimestamp, pods[j].CreationTimestamp
			if !a.Equal(&b) {
				return a.Before(&b)
			}
			return pods[i].Name < pods[j].Name
		})
		for _, p := range pods {
			for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
				if cs.ImageID == "" {
					continue
				}
				byKey[key{role, cs.Name}] = repotv1.ContainerImage{
					Pod: role, Container: Truncate(cs.Name, 63), Image: Truncate(cs.Image, 512), ImageID: Truncate(cs.ImageID, 512),
				}
			}
		}
	}
	add(build.ComponentServer, server)
	add(build.ComponentRunner, runners)
	if len(byKey) == 0 {
		return nil
	}
	out := make([]repotv1.ContainerImage, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pod != out[j].Pod {
			return out[i].Pod > out[j].Pod // server before runner
		}
		return out[i].Container < out[j].Container
	})
	if len(out) > maxProvenanceImages {
		out = out[:maxProvenanceImages]
	}
	return out
}

// runnerProvenance is the provenance a runner of model reported on its
// ledger (annotation contract.LedgerProvenanceAnnotation): the first by ledger name
// (shard 0 when it reported) of the reports that read the server's
// /v1/models, since the shards of one model run the same image against the
// same server; when none did, the first report by name, with its
// server_error. Unreadable annotations are skipped.
func runnerProvenance(ledgers []corev1.ConfigMap, model string) (contract.Provenance, bool) {
	idx := make([]int, 0, len(ledgers))
	for i := range ledgers {
		if ledgers[i].Labels[build.LabelModel] == model && ledgers[i].Annotations[contract.LedgerProvenanceAnnotation] != "" {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return ledgers[idx[a]].Name < ledgers[idx[b]].Name })
	var first *contract.Provenance
	for _, i := range idx {
		p, err := contract.ParseProvenance([]byte(ledgers[i].Annotations[contract.LedgerProvenanceAnnotation]))
		if err != nil {
			continue
		}
		if p.ServerError == "" {
			return p, true
		}
		if first == nil {
			first = &p
		}
	}
	if first != nil {
		return *first, true
	}
	return contract.Provenance{}, false
}

// applyRunnerProvenance copies a runner's report into p, bounded: the
// served models, the runner's build, and its request parameters split into
// sampling (with the system prefix) and chat-template kwargs, by name.
func applyRunnerProvenance(p *repotv1.ModelProvenance, rp contract.Provenance) {
	p.RepotVersion, p.RepotCommit = Truncate(rp.RepotVersion, 128), Truncate(rp.RepotCommit, 64)
	p.ServerReportError = Truncate(rp.ServerError, 512)
	for _, s := range rp.ServedModels {
		if len(p.ServedModels) == maxServedModels {
			break
		}
		p.ServedModels = append(p.ServedModels, repotv1.ServedModel{ID: Truncate(s.ID, 256), Root: Truncate(s.Root, 512), MaxModelLen: s.MaxModelLen})
	}
	for name, raw := range rp.Request {
		if name == chatTemplateKwargsField {
			var kw map[string]json.RawMessage
			if json.Unmarshal(raw, &kw) == nil {
				for k, v := range kw {
					p.ChatTemplateKwargs = append(p.ChatTemplateKwargs, nameValue(k, v))
				}
				continue
			}
		}
		p.Sampling = append(p.Sampling, nameValue(name, raw))
	}
	if rp.SystemPrefix != "" {
		p.Sampling = append(p.Sampling, repotv1.NameValue{Name: "system_prefix", Value: Truncate(rp.SystemPrefix, maxNameValueValue)})
	}
	p.Sampling, p.ChatTemplateKwargs = sortedNameValues(p.Sampling), sortedNameValues(p.ChatTemplateKwargs)
}

// nameValue is one request field: strings as themselves, other values as
// their compact JSON.
func nameValue(name string, raw json.RawMessage) repotv1.NameValue {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			s = b.String()
		} else {
			s = strings.TrimSpace(string(raw))
		}
	}
	return repotv1.NameValue{Name: Truncate(name, 64), Value: Truncate(s, maxNameValueValue)}
}

// sortedNameValues sorts by name and keeps maxNameValues; nil stays nil.
func sortedNameValues(nv []repotv1.NameValue) []repotv1.NameValue {
	sort.Slice(nv, func(i, j int) bool {
		if nv[i].Name != nv[j].Name {
			return nv[i].Name < nv[j].Name
		}
		return nv[i].Value < nv[j].Value // equal names (cut to length) keep one order
	})
	if len(nv) > maxNameValues {
		nv = nv[:maxNameValues]
	}
	return nv
}

// PreviousProvenance is the model's provenance in the evaluation's last
// status.
func PreviousProvenance(e *repotv1.RepotEvaluation, model string) *repotv1.ModelProvenance {
	for i := range e.Status.Models {
		if e.Status.Models[i].Name == model {
			return e.Status.Models[i].Provenance
		}
	}
	return nil
}

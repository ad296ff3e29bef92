package build

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Labels every child object carries. They make children easy to find with
// kubectl; the controller itself finds them through the owner index.
const (
	// LabelEvaluation names the owning RepotEvaluation.
	LabelEvaluation = "repot.dev/evaluation"
	// LabelModel names the model (spec.models[].name) a child serves or runs.
	LabelModel = "repot.dev/model"
	// LabelComponent is one of the Component* values.
	LabelComponent = "repot.dev/component"
	// LabelShard is the shard index of a ledger ConfigMap.
	LabelShard = "repot.dev/shard"
	// LabelSpill is the index (1, 2, ...) of a ledger's spill ConfigMap;
	// a shard's main ledger has none.
	LabelSpill = "repot.dev/spill"
	// LabelManagedBy is the standard managed-by label.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagerName    = "repot-operator"
)

// Annotations the operator keeps on a model's server Deployment.
const (
	// AnnotationStalledSince is when the operator first saw the server
	// Stalled (RFC 3339); it goes when the server recovers.
	AnnotationStalledSince = "repot.dev/stalled-since"
	// AnnotationReleased says the server was scaled to zero because it
	// stayed Stalled past spec.stalledAfterSeconds; its value is the
	// stall's reason and message. Suspending the evaluation clears it, and
	// resuming starts the server again.
	AnnotationReleased = "repot.dev/released"
)

// Annotations the builders write on a model's server Deployment (on an
// endpoint model's runner Job) at its creation and nobody changes: the
// build of the operator that created it (Options.OperatorVersion and
// OperatorCommit), which status.models[].provenance records.
const (
	AnnotationOperatorVersion = "repot.dev/operator-version"
	AnnotationOperatorCommit  = "repot.dev/operator-commit"
)

// AnnotationSealed marks a ledger ConfigMap (a shard's ledger or a spill)
// of an evaluation whose end the stored status records: its records are
// final and counted, so the manager's cache drops its data (SealedValue is
// the value) and the evaluation's passes read it from the API server.
const (
	AnnotationSealed = "repot.dev/sealed"
	SealedValue      = "true"
)

// Component label values.
const (
	ComponentServer = "server"
	ComponentRunner = "runner"
	ComponentLedger = "ledger"
)

// maxBaseLen bounds the stem of the per-model child names so that every
// derived name stays a valid DNS label (63 characters) including the pod
// names Jobs and Deployments derive from it.
const maxBaseLen = 40

// pairHashLen is the length of the hash of the (evaluation, model) pair that
// every per-model stem ends with.
const pairHashLen = 8

// ModelBase is the stem of every per-model child name:
// "<evaluation>-<model>-<hash>", where hash is the first 8 hex digits of the
// SHA-256 of "<evaluation>/<model>". The readable part is cut so that the
// stem fits in 40 characters. The hash makes the stem of each pair distinct:
// joined with a dash alone, evaluation "a-b" with model "c" and evaluation
// "a" with model "b-c" would name the same children. ("/" appears in
// neither name, so the hashed string names one pair.) The same pair always
// gets the same stem.
func ModelBase(eval, model string) string {
	sum := sha256.Sum256([]byte(eval + "/" + model))
	h := hex.EncodeToString(sum[:])[:pairHashLen]
	readable := eval + "-" + model
	if n := maxBaseLen - pairHashLen - 1; len(readable) > n {
		readable = strings.TrimRight(readable[:n], "-")
	}
	return readable + "-" + h
}

// ServerName names the Deployment and the Service of a model's server.
func ServerName(eval, model string) string { return ModelBase(eval, model) + "-server" }

// RunnerJobName names a model's Indexed runner Job.
func RunnerJobName(eval, model string) string { return ModelBase(eval, model) + "-run" }

// LedgerPrefix is the ledger name without its shard index; a runner pod
// appends $(JOB_COMPLETION_INDEX) to it.
func LedgerPrefix(eval, model string) string { return ModelBase(eval, model) + "-ledger-" }

// LedgerName names the ledger ConfigMap of one (evaluation, model, shard).
func LedgerName(eval, model string, shard int) string {
	return LedgerPrefix(eval, model) + strconv.Itoa(shard)
}

// RunnerAccessName names the per-evaluation ServiceAccount, Role, RoleBinding
// and NetworkPolicy of the runner pods.
func RunnerAccessName(eval string) string { return shorten(eval, maxBaseLen) + "-runner" }

// shorten returns s when it fits in n characters, else a prefix of s and an
// 8-character hash of the whole of s, so that distinct inputs stay distinct.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:8]
	prefix := s[:n-9]
	for len(prefix) > 0 && prefix[len(prefix)-1] == '-' {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "-" + h
}

// ChildLabels are the labels of a per-model child.
func ChildLabels(eval, model, component string) map[string]string {
	l := map[string]string{
		LabelEvaluation: eval,
		LabelComponent:  component,
		LabelManagedBy:  ManagerName,
	}
	if model != "" {
		l[LabelModel] = model
	}
	return l
}

// ServerSelector selects the pods of one model's server.
func ServerSelector(eval, model string) map[string]string {
	return map[string]string{LabelEvaluation: eval, LabelModel: model, LabelComponent: ComponentServer}
}

package artifacts

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Layout names an evaluation's objects. Every key is built from the
// prefix, the namespace, the evaluation's name and UID, and numbers, each
// validated, never from model text:
//
//	PREFIX/NAMESPACE/EVALUATION/UID/manifest.json                             the evaluation's manifest
//	PREFIX/NAMESPACE/EVALUATION/UID/MODEL/shard-0003/manifest.json            model MODEL's shard 3's manifest
//	PREFIX/NAMESPACE/EVALUATION/UID/MODEL/shard-0003/traces/000001.jsonl      its first traces segment
//
// The UID keeps a re-created evaluation of the same name apart from the
// old one's artifacts.
type Layout struct {
	Prefix     string
	Namespace  string
	Evaluation string
	UID        string
}

var (
	// A Kubernetes namespace or object name as the API accepts them
	// (DNS-1123 subdomain; evaluations are labels, which are a subset).
	nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	uidRE  = regexp.MustCompile(`^[a-fA-F0-9-]{8,64}$`)
	// A model's name as the API accepts it (spec.models[].name).
	modelRE = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$`)
)

// MaxShards bounds shard numbers in keys (four digits).
const MaxShards = 10000

// Validate says what is wrong with l, or nil.
func (l Layout) Validate() error {
	var errs []error
	if err := validPrefix(l.Prefix); err != nil {
		errs = append(errs, err)
	}
	if !nameRE.MatchString(l.Namespace) {
		errs = append(errs, fmt.Errorf("namespace %q is not a Kubernetes name", l.Namespace))
	}
	if !nameRE.MatchString(l.Evaluation) {
		errs = append(errs, fmt.Errorf("evaluation %q is not a Kubernetes name", l.Evaluation))
	}
	if !uidRE.MatchString(l.UID) {
		errs = append(errs, fmt.Errorf("uid %q is not a Kubernetes UID", l.UID))
	}
	return errors.Join(errs...)
}

// EvaluationPrefix is the prefix of every object of the evaluation, with a
// trailing slash.
func (l Layout) EvaluationPrefix() string {
	return path.Join(l.Prefix, l.Namespace, l.Evaluation, l.UID) + "/"
}

// ManifestKey is the evaluation's manifest.
func (l Layout) ManifestKey() string { return l.EvaluationPrefix() + "manifest.json" }

// Shard is one runner shard: a model's Job completion index.
type Shard struct {
	Model string `json:"model"`
	Index int    `json:"index"`
}

// Validate says what is wrong with s, or nil.
func (s Shard) Validate() error {
	if !modelRE.MatchString(s.Model) {
		return fmt.Errorf("model %q is not a model name of the API", s.Model)
	}
	if s.Index < 0 || s.Index >= MaxShards {
		return fmt.Errorf("shard %d out of range [0, %d)", s.Index, MaxShards)
	}
	return nil
}

func (s Shard) String() string { return fmt.Sprintf("%s/%d", s.Model, s.Index) }

// ShardPrefix is the prefix of shard's objects, with a trailing slash.
func (l Layout) ShardPrefix(s Shard) string {
	return fmt.Sprintf("%s%s/shard-%04d/", l.EvaluationPrefix(), s.Model, s.Index)
}

// ShardManifestKey is shard's manifest.
func (l Layout) ShardManifestKey(s Shard) string { return l.ShardPrefix(s) + "manifest.json" }

// SegmentKey is shard's seq-th traces segment (seq from 1).
func (l Layout) SegmentKey(s Shard, seq int) string {
	return fmt.Sprintf("%straces/%06d.jsonl", l.ShardPrefix(s), seq)
}

// SegmentSeq reads the sequence number back from a segment key of shard
// (ok false for any other key).
func (l Layout) SegmentSeq(s Shard, key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, l.ShardPrefix(s)+"traces/")
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(rest, ".jsonl")
	if !ok || len(num) != 6 {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && n > 0
}

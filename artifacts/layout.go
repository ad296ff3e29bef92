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
//	PREFIX/NAMESPACE/EVALUATION/UID/manifest.json                      the evaluation's manifest
//	PREFIX/NAMESPACE/EVALUATION/UID/shards/0003/manifest.json          shard 3's manifest
//	PREFIX/NAMESPACE/EVALUATION/UID/shards/0003/traces/000001.jsonl    its first traces segment
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

// ShardPrefix is the prefix of shard's objects, with a trailing slash.
func (l Layout) ShardPrefix(shard int) string {
	return fmt.Sprintf("%sshards/%04d/", l.EvaluationPrefix(), shard)
}

// ShardManifestKey is shard's manifest.
func (l Layout) ShardManifestKey(shard int) string { return l.ShardPrefix(shard) + "manifest.json" }

// SegmentKey is shard's seq-th traces segment (seq from 1).
func (l Layout) SegmentKey(shard, seq int) string {
	return fmt.Sprintf("%straces/%06d.jsonl", l.ShardPrefix(shard), seq)
}

// SegmentSeq reads the sequence number back from a segment key of shard
// (ok false for any other key).
func (l Layout) SegmentSeq(shard int, key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, l.ShardPrefix(shard)+"traces/")
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

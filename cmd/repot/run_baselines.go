package repot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner/methods"
)

// baselineFlags are the settings of the paper's baselines:
// self-consistency's k and VEX's call budget, chunk sizes and proposers.
type baselineFlags struct {
	scSamples      int
	vexMaxLLMCalls int
	// vexChunkSize and vexProposer are ENV=VALUE pairs.
	vexChunkSize []string
	vexProposer  []string
}

// addBaselineFlags adds `repot run`'s flags of cot, self-consistency and
// vex (and the vex-* Derail conditions).
func addBaselineFlags(fl *pflag.FlagSet, f *runFlags) {
	d := methods.DefaultOptions()
	fl.IntVar(&f.baselines.scSamples, "self-consistency-samples", d.SelfConsistencySamples,
		"self-consistency: the most samples k per problem (at --temperature 0 a deterministic server answers them alike)")
	fl.IntVar(&f.baselines.vexMaxLLMCalls, "vex-max-llm-calls", d.VEX.MaxLLMCalls, "vex and the vex-* Derail conditions: model calls per run at most")
	fl.StringSliceVar(&f.baselines.vexChunkSize, "vex-chunk-size", nil,
		"vex: ENV=N, the most moves one proposal commits in environment ENV (repeatable; defaults: tower_of_hanoi=200, checker_jumping=64, river_crossing=16, blocksworld=32, others 32)")
	fl.StringSliceVar(&f.baselines.vexProposer, "vex-proposer", nil,
		"vex: ENV=json|code, how proposals are asked for in environment ENV (repeatable; defaults: code for tower_of_hanoi and checker_jumping, json elsewhere)")
}

// checkBaselines validates the baseline flags.
func (f *runFlags) checkBaselines() error {
	b := &f.baselines
	if b.scSamples < 1 {
		return fmt.Errorf("--self-consistency-samples must be at least 1, got %d", b.scSamples)
	}
	if b.vexMaxLLMCalls < 1 {
		return fmt.Errorf("--vex-max-llm-calls must be at least 1, got %d", b.vexMaxLLMCalls)
	}
	if _, err := envPairs("--vex-chunk-size", b.vexChunkSize, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive number of moves", v)
		}
		return nil
	}); err != nil {
		return err
	}
	_, err := envPairs("--vex-proposer", b.vexProposer, func(v string) error {
		if v != methods.ProposerJSON && v != methods.ProposerCode {
			return fmt.Errorf("%q is not a proposer (use %s or %s)", v, methods.ProposerJSON, methods.ProposerCode)
		}
		return nil
	})
	return err
}

// envPairs parses ENV=VALUE pairs, checking that ENV is an environment and
// VALUE passes check.
func envPairs(flag string, pairs []string, check func(string) error) (map[string]string, error) {
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		env, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%s %q: give ENV=VALUE, such as tower_of_hanoi=100", flag, p)
		}
		if _, err := envs.Lookup(env); err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, p, err)
		}
		if err := check(v); err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, p, err)
		}
		out[env] = v
	}
	return out, nil
}

// baselineOptions sets the baselines' engine options from the flags (which
// check validated).
func (f *runFlags) baselineOptions(opts *methods.Options) {
	b := f.baselines
	opts.SelfConsistencySamples = b.scSamples
	opts.VEX.MaxLLMCalls = b.vexMaxLLMCalls
	sizes, _ := envPairs("--vex-chunk-size", b.vexChunkSize, func(string) error { return nil })
	for env, v := range sizes {
		if n, err := strconv.Atoi(v); err == nil {
			opts.VEX.ChunkSize[env] = n
		}
	}
	proposers, _ := envPairs("--vex-proposer", b.vexProposer, func(string) error { return nil })
	for env, v := range proposers {
		opts.VEX.Proposer[env] = v
	}
}

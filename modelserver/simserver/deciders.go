package simserver

import "repot.dev/repot-operator/contract"

// Call is what a decider reads of one request.
type Call struct {
	Messages []contract.Message
	// MaxTokens is the completion cap (0: none given).
	MaxTokens int
	// Temperature is the sampling temperature (0 when none given).
	Temperature float64
	// Seed is the request's sampling seed, nil when none was given.
	Seed *int64
}

// decider answers one kind of prompt; ok is false when the call's prompt is
// not of its kind.
type decider func(p *Profile, seed int64, c Call) (d Decision, reply Reply, ok bool)

// deciders answer the prompts of the methods that do not start with a PoT
// program, tried before the recovery and PoT prompts: cot and
// self-consistency samples (cot.go), VEX chunks (chunk.go) and the
// step-by-step agent's action choices (step.go).
var deciders = []decider{decideCoT, decideChunk, decideStep}

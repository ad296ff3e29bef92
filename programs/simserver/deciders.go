package simserver

import "repot.dev/repot-operator/contract"

// decider answers one kind of prompt; ok is false when msgs are not of its
// kind.
type decider func(p *Profile, seed int64, msgs []contract.Message, maxTokens int) (d Decision, reply Reply, ok bool)

// deciders answer the prompts of the methods that do not start with a PoT
// program, tried before the recovery and PoT prompts: cot and
// self-consistency samples (cot.go), VEX chunks (chunk.go) and the
// step-by-step agent's action choices (step.go).
var deciders = []decider{decideCoT, decideChunk, decideStep}

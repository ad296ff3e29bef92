// Package replay is verified replay, vocabulary the engine, the judge and
// the analysis share: a plan applied move by move through the problem's
// exact verifier up to its first illegal move (Replay), its outcome as the
// engine reads it (Result: the verified prefix, the state it reaches, the
// move that stopped it and why) and as traces record it (Trace). It
// imports only the contract and envs, and never calls a model.
package replay

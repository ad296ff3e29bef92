package methods

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/program"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/sandbox"
)

// infraError is a call that failed for reasons outside the model; it ends
// the run as an infra-error record.
type infraError struct {
	msg     string
	retries int
}

// Error is the failure's message, as the record keeps it.
func (e *infraError) Error() string { return e.msg }

// ErrAborted is returned when the run's context ended before it finished;
// such a run is not recorded as a run: only its aborted attempt, when a
// model call of it returned (contract.Record.Aborted).
var ErrAborted = errors.New("run aborted")

// plan is what one model call produced: the moves, or the reason there are
// none.
type plan struct {
	moves []json.RawMessage
	// failure is the stop reason when the reply gave no usable plan
	// (contract.StopNoPlan, contract.StopProgramError, contract.StopSandboxRejected, contract.StopTruncated,
	// contract.StopFormatError); "" when moves were parsed (possibly none).
	failure string
	// message explains failure to the model in a repair prompt.
	message string
}

// call makes one model call and turns its reply into a plan, returning it
// with the index of its trace in r.trace.Calls: extract the
// program, run it in the sandbox, parse the printed moves. It appends the
// call's trace to r.trace.Calls and adds its usage to the run's totals. The
// returned error is an *infraError, or ErrAborted when ctx ended.
func (r *run) call(ctx context.Context, purpose string, msgs []contract.Message) (plan, int, error) {
	ct, resp, err := r.complete(ctx, purpose, msgs)
	if err != nil {
		return plan{}, -1, err
	}
	pl, err := r.execute(ctx, ct, resp)
	r.trace.Calls = append(r.trace.Calls, *ct)
	if err != nil {
		return plan{}, -1, err
	}
	return pl, len(r.trace.Calls) - 1, nil
}

// complete makes one model call and accounts for it: usage and retries go
// to the run's totals. On failure the call's trace is appended and the
// error is an *infraError or ErrAborted; on success the caller appends ct
// once it has done its work with the reply.
func (r *run) complete(ctx context.Context, purpose string, msgs []contract.Message) (*contract.CallTrace, model.Response, error) {
	ct := &contract.CallTrace{Index: len(r.trace.Calls), Purpose: purpose, Prompt: msgs}
	if err := r.deps.Gate.Acquire(ctx, purpose != contract.PurposeInitial); err != nil {
		return nil, model.Response{}, ErrAborted
	}
	r.markStart()
	resp, err := r.deps.Client.Complete(ctx, model.Request{Messages: msgs, Temperature: r.opts.Temperature, MaxTokens: r.opts.MaxTokens})
	r.deps.Gate.Release()
	if err != nil {
		if ctx.Err() != nil {
			return nil, model.Response{}, ErrAborted
		}
		retries := 0
		var ie *model.InfraError
		if errors.As(err, &ie) {
			retries = ie.Retries()
		}
		r.retries += retries
		ct.Retries, ct.InfraError = retries, err.Error()
		r.trace.Calls = append(r.trace.Calls, *ct)
		return nil, model.Response{}, &infraError{msg: err.Error(), retries: retries}
	}
	r.calls++
	r.usage.Prompt += resp.Usage.Prompt
	r.usage.Completion += resp.Usage.Completion
	r.usage.Cached += resp.Usage.Cached
	r.usage.Reasoning += resp.Usage.Reasoning
	r.retries += resp.Retries
	ct.Completion, ct.FinishReason, ct.Usage = resp.Content, resp.FinishReason, resp.Usage
	ct.LatencyMS, ct.Retries = resp.Latency.Milliseconds(), resp.Retries
	return ct, resp, nil
}

// execute runs the reply's program and parses its moves.
func (r *run) execute(ctx context.Context, ct *contract.CallTrace, resp model.Response) (plan, error) {
	truncated := resp.FinishReason == "length"
	fail := func(reason, msg string) plan {
		if truncated {
			reason, msg = contract.StopTruncated, "The reply was cut off at the token limit before a complete program; "+msg
		}
		ct.Outcome = reason
		return plan{failure: reason, message: msg}
	}
	ct.Code = program.Extract(resp.Content)
	if strings.TrimSpace(ct.Code) == "" {
		return fail(contract.StopNoPlan, "The reply contained no program."), nil
	}
	res, err := r.runProgram(ctx, ct.Code)
	if err != nil {
		if ctx.Err() != nil {
			return plan{}, ErrAborted
		}
		ct.InfraError = "sandbox: " + err.Error()
		return plan{}, &infraError{msg: ct.InfraError}
	}
	ct.Stdout, ct.Stderr, ct.ExitCode = res.Stdout, res.Stderr, res.ExitCode
	ct.SandboxFailure, ct.SandboxMS = res.Failure, res.Duration.Milliseconds()
	if res.Failure != "" {
		if strings.HasPrefix(res.Failure, "rejected") {
			return fail(contract.StopSandboxRejected, "The program was rejected before running: "+res.Failure+"."), nil
		}
		msg := "The program failed (" + res.Failure + ")."
		if tail := lastLine(res.Stderr); tail != "" {
			msg += " Last error line: " + tail
		}
		return fail(contract.StopProgramError, msg), nil
	}
	moves, err := program.ParseMoves(res.Stdout, ct.Code)
	if err != nil {
		ct.ParseError = err.Error()
		if errors.Is(err, program.ErrNoMoves) {
			return fail(contract.StopNoPlan, "The program printed no `moves = [...]` line."), nil
		}
		return fail(contract.StopFormatError, fmt.Sprintf("The printed moves could not be parsed: %v", err)), nil
	}
	ct.Plan = moves
	return plan{moves: moves}, nil
}

// sandboxAttempts is how often a program is tried when the sandbox itself
// fails (python3 could not start, no temporary directory); sandboxBackoff is
// the first wait between attempts, doubling.
const (
	sandboxAttempts = 3
	sandboxBackoff  = 200 * time.Millisecond
)

// runProgram runs code in the sandbox, retrying infrastructure failures of
// the sandbox with backoff; the retries count as infra retries.
func (r *run) runProgram(ctx context.Context, code string) (sandbox.Result, error) {
	wait := sandboxBackoff
	for attempt := 1; ; attempt++ {
		res, err := r.deps.Sandbox.Run(ctx, code)
		if err == nil || ctx.Err() != nil || attempt == sandboxAttempts {
			return res, err
		}
		r.retries++
		if serr := r.deps.Sleep(ctx, wait); serr != nil {
			return res, err
		}
		wait *= 2
	}
}

// lastLine returns the last non-blank line of s, cut to 200 bytes.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return l
}

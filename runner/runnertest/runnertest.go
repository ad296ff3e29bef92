// Package runnertest holds the test doubles that the tests of the methods
// and of the engine share: a scripted model client, a sandbox that "runs" a
// program by printing it, and a clock that advances on every read. They are
// fakes for tests only; the real client, sandbox and clock are
// runner/model.OpenAI, runner/sandbox.Python and model.SystemClock.
package runnertest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/sandbox"
)

// Reply is one scripted model answer: a program text (FakeSandbox "runs"
// it), or an infrastructure error.
type Reply struct {
	Code   string
	Finish string
	Err    error
	// Raw sends Code as the reply's whole content, not wrapped in a
	// python code block: a chain-of-thought answer, or an empty reply.
	Raw bool
}

// ScriptedClient answers calls in order from Script, and records them.
type ScriptedClient struct {
	mu      sync.Mutex
	Script  []Reply
	Reqs    []model.Request
	Retries int
}

// Complete answers with the next scripted reply.
func (c *ScriptedClient) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return model.Response{}, err
	}
	c.Reqs = append(c.Reqs, req)
	if len(c.Script) == 0 {
		return model.Response{}, errors.New("script exhausted")
	}
	r := c.Script[0]
	c.Script = c.Script[1:]
	if r.Err != nil {
		return model.Response{}, r.Err
	}
	finish := r.Finish
	if finish == "" {
		finish = "stop"
	}
	content := "Here is the program:\n```python\n" + r.Code + "\n```\n"
	if r.Raw {
		content = r.Code
	}
	return model.Response{
		Content:      content,
		FinishReason: finish,
		Usage:        contract.Usage{Prompt: 100, Completion: 20, Cached: 5, Reasoning: 1},
		Latency:      time.Second,
		Retries:      c.Retries,
	}, nil
}

// FakeSandbox "runs" a program by printing its text, except for a few
// magic programs: CRASH fails, REJECT is rejected, INFRA cannot start.
var FakeSandbox = sandbox.Func(func(ctx context.Context, code string) (sandbox.Result, error) {
	switch code {
	case "CRASH":
		return sandbox.Result{Stderr: "Traceback...\nZeroDivisionError: division by zero", ExitCode: 1, Failure: "crash"}, nil
	case "REJECT":
		return sandbox.Result{Failure: "rejected: import of 'os' is not allowed"}, nil
	case "INFRA":
		return sandbox.Result{}, errors.New("python3 not found")
	}
	return sandbox.Result{Stdout: code + "\n", Duration: time.Millisecond}, nil
})

// MovesCode is a "program" printing the given moves.
func MovesCode(moves ...string) string { return "moves = [" + strings.Join(moves, ", ") + "]" }

// FakeClock advances one second each time it is read.
type FakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// Now advances the clock by a second and returns it.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// FakeClockStart is the time a NewFakeClock starts at.
var FakeClockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewFakeClock returns a FakeClock at FakeClockStart.
func NewFakeClock() *FakeClock { return &FakeClock{t: FakeClockStart} }

package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"repot.dev/repot-operator/contract"

	"repot.dev/repot-operator/runner/model"
)

// reply is one scripted model answer: a program text (the fake sandbox
// "runs" it, see fakeSandbox), or an infra error.
type reply struct {
	code   string
	finish string
	err    error
}

// scriptedClient answers calls in order from a script.
type scriptedClient struct {
	mu      sync.Mutex
	script  []reply
	reqs    []model.Request
	retries int
}

func (c *scriptedClient) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return model.Response{}, err
	}
	c.reqs = append(c.reqs, req)
	if len(c.script) == 0 {
		return model.Response{}, errors.New("script exhausted")
	}
	r := c.script[0]
	c.script = c.script[1:]
	if r.err != nil {
		return model.Response{}, r.err
	}
	finish := r.finish
	if finish == "" {
		finish = "stop"
	}
	return model.Response{
		Content:      "Here is the program:\n```python\n" + r.code + "\n```\n",
		FinishReason: finish,
		Usage:        contract.Usage{Prompt: 100, Completion: 20, Cached: 5, Reasoning: 1},
		Latency:      time.Second,
		Retries:      c.retries,
	}, nil
}

// fakeSandbox "runs" a program by printing its text, except for a few
// magic programs: CRASH fails, REJECT is rejected, INFRA cannot start.
var fakeSandbox = SandboxFunc(func(ctx context.Context, code string) (ProgramResult, error) {
	switch code {
	case "CRASH":
		return ProgramResult{Stderr: "Traceback...\nZeroDivisionError: division by zero", ExitCode: 1, Failure: "crash"}, nil
	case "REJECT":
		return ProgramResult{Failure: "rejected: import of 'os' is not allowed"}, nil
	case "INFRA":
		return ProgramResult{}, errors.New("python3 not found")
	}
	return ProgramResult{Stdout: code + "\n", Duration: time.Millisecond}, nil
})

// movesCode is a "program" printing the given moves.
func movesCode(moves ...string) string { return "moves = [" + strings.Join(moves, ", ") + "]" }

// fakeClock advances one second each time it is read.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// fakeClockStart is the first time of newFakeClock.
var fakeClockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFakeClock() *fakeClock { return &fakeClock{t: fakeClockStart} }

var errInfra = &model.InfraError{Cause: fmt.Errorf("connection reset"), Attempts: 4, Retryable: true}

// errHugeInfra quotes a long server reply, as a proxy's error page would.
var errHugeInfra = &model.InfraError{Cause: fmt.Errorf("502 from proxy: %s", strings.Repeat("<html>bad gateway é</html>\n", 500)), Attempts: 4, Retryable: true}

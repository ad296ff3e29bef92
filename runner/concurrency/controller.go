package concurrency

import (
	"context"
	"errors"
	"math"
	"sort"
	"sync"
	"time"
)

// Clock tells the time; tests inject a fake one. runner/model.SystemClock
// is the real one.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Limiter is what the controller steers: the runner's gate of model calls.
type Limiter interface {
	// Limit and SetLimit read and set the calls admitted at once.
	Limit() int
	SetLimit(n int)
	// InFlight is the calls in flight now.
	InFlight() int
	// Peak is the most calls in flight since the last Peak, and whether a
	// call waited for a slot in that time; it starts a new interval.
	Peak() (inFlight int, blocked bool)
}

// Defaults of Options.
const (
	DefaultInterval = 500 * time.Millisecond
	DefaultHeadroom = 1.1
	// DefaultSamples is the readings of the server per step.
	DefaultSamples = 4
	// DefaultMax is the upper bound when Options gives none.
	DefaultMax = 256
)

// Options configure a Controller.
type Options struct {
	// Max bounds the limit (default DefaultMax); Min is the least (default
	// 1). Initial is the limit the controller starts from (default Min):
	// the top per-sequence speed is learnt at a load below the server's
	// knee, so the start is low and grows exponentially (slow start).
	Max, Min, Initial int
	// Interval between control steps (default DefaultInterval).
	Interval time.Duration
	// Samples is the readings of the server's gauges per step, evenly
	// spaced, whose mean is the step's load (default DefaultSamples): a
	// gauge read once is noisy where requests come and go.
	Samples int
	// Headroom is how far past the server's knee the load is kept, as a
	// factor (default DefaultHeadroom): at the target, a sequence decodes
	// at 1/Headroom of its top speed, so that the throughput stays at its
	// cap while requests come and go. Without the inter-token latency the
	// speed per running request (lowered by the prefilling ones) is read
	// with a headroom of 1.25.
	Headroom float64
	// Source reads the server's signals; nil: the controller uses the token
	// throughput of the calls it observes.
	Source Source
	// Clock reads the time (default the system clock).
	Clock Clock
	// OnStep, when not nil, is called after every step (a log, a test).
	OnStep func(Step)
}

// Mode says where the controller's signals come from.
type Mode string

const (
	// ModeServer reads the server's metrics (vLLM /metrics).
	ModeServer Mode = "server-metrics"
	// ModeCalls reads the token throughput of the runner's own calls.
	ModeCalls Mode = "call-throughput"
)

// Controller adapts a Limiter's limit. Observe is safe for concurrent use;
// Step and Run are called from one goroutine.
type Controller struct {
	opt Options
	lim Limiter

	mu sync.Mutex
	// Calls completed since the last step: tokens and seconds.
	obsTokens, obsSeconds float64
	obsCalls              int
	// state of the law
	law law
	// prev is the server reading of the previous step and prevAt its time;
	// the readings since sum up in acc.
	prev   *Signals
	prevAt time.Time
	acc    readings
	source Source
	mode   Mode
	// failedSteps counts the steps in a row without one reading of the
	// source; sourceErr is the last error it gave.
	failedSteps int
	sourceErr   error
	history     []int // the limit after each step past slow start
	lastStep    Step
}

// New returns a controller of lim. It sets lim's limit to the initial one.
func New(opt Options, lim Limiter) *Controller {
	if opt.Max < 1 {
		opt.Max = DefaultMax
	}
	if opt.Min < 1 {
		opt.Min = 1
	}
	opt.Min = min(opt.Min, opt.Max)
	if opt.Initial < opt.Min {
		opt.Initial = opt.Min
	}
	opt.Initial = min(opt.Initial, opt.Max)
	if opt.Interval <= 0 {
		opt.Interval = DefaultInterval
	}
	if opt.Samples < 1 {
		opt.Samples = DefaultSamples
	}
	if opt.Headroom < 1 || math.IsNaN(opt.Headroom) {
		opt.Headroom = DefaultHeadroom
	}
	if opt.Clock == nil {
		opt.Clock = systemClock{}
	}
	c := &Controller{opt: opt, lim: lim, source: opt.Source, mode: ModeCalls}
	if opt.Source != nil {
		c.mode = ModeServer
	}
	c.law = law{headroom: opt.Headroom, min: opt.Min, max: opt.Max, slowStart: true}
	lim.SetLimit(opt.Initial)
	c.prevAt = opt.Clock.Now()
	return c
}

// Observe reports a call that completed: its completion tokens and wall
// time. The call-throughput fallback is made of these.
func (c *Controller) Observe(tokens int, latency time.Duration) {
	if tokens <= 0 || latency <= 0 {
		return
	}
	c.mu.Lock()
	c.obsTokens += float64(tokens)
	c.obsSeconds += latency.Seconds()
	c.obsCalls++
	c.mu.Unlock()
}

// Step is what one control step saw and did.
type Step struct {
	At   time.Time
	Mode Mode
	// Load is the requests at the server (running + waiting, server mode)
	// or this runner's calls in flight (call mode), mean over the interval.
	Load float64
	// Speed is the per-request token speed of the interval, TopSpeed the
	// highest seen; Target the load the law aims at (all shards together in
	// server mode).
	Speed, TopSpeed, Target float64
	// Running, Waiting and KVCacheUsage are the server's, in server mode.
	Running, Waiting, KVCacheUsage float64
	// Limit is the limit after the step.
	Limit int
	// Action: "slow-start", "increase", "decrease", "hold".
	Action string
}

// Run reads the server Samples times per Interval, and steps at the end
// of each Interval, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	t := time.NewTicker(c.opt.Interval / time.Duration(c.opt.Samples))
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n%c.opt.Samples == 0 {
				c.Step(ctx)
			} else {
				c.Sample(ctx)
			}
		}
	}
}

// readings accumulate the gauges read within a step's interval.
type readings struct {
	n, nOwn               int
	running, waiting, own float64
	last                  *Signals
	failed                bool
}

// Sample reads the server's gauges (and this runner's calls in flight)
// once within the interval; the step at its end uses their mean.
func (c *Controller) Sample(ctx context.Context) {
	c.acc.own += float64(c.lim.InFlight())
	c.acc.nOwn++
	if c.source == nil {
		return
	}
	sig, err := c.source.Read(ctx)
	switch {
	case err == nil:
		c.acc.running += sig.Running
		c.acc.waiting += sig.Waiting
		c.acc.n++
		if p := c.acc.last; p != nil && p.HasInterToken && sig.HasInterToken {
			c.pace(sig.InterTokens-p.InterTokens, sig.InterTokenSeconds-p.InterTokenSeconds, sig.Running)
		} else if p := c.prev; c.acc.last == nil && p != nil && p.HasInterToken && sig.HasInterToken {
			c.pace(sig.InterTokens-p.InterTokens, sig.InterTokenSeconds-p.InterTokenSeconds, sig.Running)
		}
		c.acc.last = &sig
	case errors.Is(err, ErrNoMetrics):
		c.mu.Lock()
		c.source, c.prev, c.sourceErr = nil, nil, err // ask no more
		c.mu.Unlock()
	default:
		c.acc.failed = true
		c.mu.Lock()
		c.sourceErr = err
		c.mu.Unlock()
	}
}

// minPaceTokens is the least tokens a reading's decode speed is taken
// from.
const minPaceTokens = 32

// pace grows the limit within a step during slow start, from the decode
// speed between two readings: while every sequence decodes at the top
// speed (the server is below its knee) and the limit holds calls back, the
// limit grows at every reading by the factor that doubles it every step
// (a knee of 128 is 5 doublings from 4); the first reading below the top
// ends the growth until the step decides. The
// requests a growth admits show in the decode speed only after their time
// to first token, so slow start overshoots the knee by a reading or two.
func (c *Controller) pace(tokens, seconds, running float64) {
	if !c.law.slowStart || c.law.paused || tokens < minPaceTokens || seconds <= 0 {
		return
	}
	speed := tokens / seconds
	if running >= minTopRunning && speed > c.law.topDecode {
		c.law.topDecode = speed
	}
	if c.law.topDecode == 0 || speed < c.law.topDecode*paceSpeed {
		c.law.paused = true
		return
	}
	limit := c.lim.Limit()
	if c.lim.InFlight() < limit {
		return // the limit holds nothing back
	}
	next := min(c.opt.Max, int(math.Ceil(float64(limit)*math.Pow(2, 1/float64(c.opt.Samples)))))
	c.lim.SetLimit(next)
}

// paceSpeed is the share of the top decode speed below which slow start
// stops growing.
const paceSpeed = 0.95

// Step takes the interval's last reading and makes one control step from
// the readings since the previous step: it sets the limit.
func (c *Controller) Step(ctx context.Context) Step {
	c.Sample(ctx)
	now := c.opt.Clock.Now()
	peak, blocked := c.lim.Peak()
	acc := c.acc
	c.acc = readings{}
	if c.source != nil {
		// A source that gives no reading for maxFailedSteps steps in a
		// row (a name that does not resolve, a page behind a proxy) is
		// given up: holding the limit until it answers would freeze it.
		if acc.last == nil {
			c.failedSteps++
		} else {
			c.failedSteps = 0
		}
		if c.failedSteps >= maxFailedSteps {
			c.mu.Lock()
			c.source, c.prev = nil, nil
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	tokens, seconds, calls := c.obsTokens, c.obsSeconds, c.obsCalls
	if c.source == nil && calls < minCallsPerStep {
		// Too few calls ended in this interval to judge their speed: they
		// count toward the next step's.
		tokens, seconds = 0, 0
	} else {
		c.obsTokens, c.obsSeconds, c.obsCalls = 0, 0, 0
	}
	c.mu.Unlock()
	dt := now.Sub(c.prevAt).Seconds()
	s := sample{blocked: blocked, peak: peak, kv: -1}
	if acc.nOwn > 0 {
		s.own = acc.own / float64(acc.nOwn)
	}
	mode := ModeCalls
	if c.source != nil && acc.last != nil {
		mode = ModeServer
		sig := *acc.last
		if c.prev != nil && dt > 0 && !acc.failed {
			s.running = acc.running / float64(acc.n)
			s.waiting = acc.waiting / float64(acc.n)
			s.load = s.running + s.waiting
			if sig.HasInterToken && c.prev.HasInterToken {
				if n, sec := sig.InterTokens-c.prev.InterTokens, sig.InterTokenSeconds-c.prev.InterTokenSeconds; n > 0 && sec > 0 {
					s.speed, s.decode = n/sec, true
				}
			} else if gen := sig.GenerationTokens - c.prev.GenerationTokens; gen >= 0 && s.running > 0 {
				s.speed = gen / dt / s.running
			}
			s.valid = true
		}
		s.kv = sig.KVCacheUsage
		c.prev = &sig
		if acc.failed {
			c.prev = nil // a gap: the next step starts a new interval
		}
	} else if c.source != nil {
		mode = ModeServer // no reading this step: hold
		c.prev = nil
	}
	if mode == ModeCalls {
		s.load = s.own
		s.running = s.own
		if seconds > 0 {
			s.speed = tokens / seconds
			s.valid = true
		}
	}
	c.prevAt = now
	limit := c.lim.Limit()
	next, action, target := c.law.step(s, limit)
	if next != limit {
		c.lim.SetLimit(next)
	}
	top := c.law.top
	if s.decode {
		top = c.law.topDecode
	}
	st := Step{At: now, Mode: mode, Load: s.load, Speed: s.speed, TopSpeed: top, Target: target,
		Running: s.running, Waiting: s.waiting, KVCacheUsage: s.kv, Limit: next, Action: action}
	c.mu.Lock()
	c.mode = mode
	if !c.law.slowStart && blocked {
		c.history = append(c.history, next)
	}
	c.lastStep = st
	c.mu.Unlock()
	if c.opt.OnStep != nil {
		c.opt.OnStep(st)
	}
	return st
}

// maxFailedSteps is the steps in a row without a reading of the server
// after which the controller falls back on its own calls.
const maxFailedSteps = 3

// minCallsPerStep is the least completed calls a call-throughput step
// judges the speed from; fewer carry over to the next step.
const minCallsPerStep = 2

// SourceError is why the controller stopped reading the server's metrics
// (nil while it reads them, or when it was given no source).
func (c *Controller) SourceError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.source != nil {
		return nil
	}
	return c.sourceErr
}

// Mode is where the last step's signals came from.
func (c *Controller) Mode() Mode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mode
}

// Last is the last step.
func (c *Controller) Last() Step {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastStep
}

// Settled is the concurrency the controller settled at: the median limit
// over the steps after slow start in which the limit held calls back (the
// steps in which it mattered); the current limit when there were none.
func (c *Controller) Settled() int {
	c.mu.Lock()
	h := append([]int(nil), c.history...)
	c.mu.Unlock()
	if len(h) == 0 {
		return c.lim.Limit()
	}
	sort.Ints(h)
	return h[len(h)/2]
}

// sample is one interval's measurement.
type sample struct {
	// valid: speed and load are measured (a previous reading exists).
	valid bool
	// load is the requests at the server (or own calls), running and
	// waiting those of the server; own is this runner's calls in flight;
	// all means over the interval.
	load, running, waiting, own float64
	// kv is the KV cache usage, -1 unknown.
	kv float64
	// speed is tokens per second per running request, or with decode the
	// decode speed of one sequence (from the inter-token latency).
	speed  float64
	decode bool
	// peak and blocked come from the gate.
	peak    int
	blocked bool
}

// minTopRunning is the least load whose speed counts toward the top
// speed: one or two requests coming and going make for a noisy mean.
const minTopRunning = 2

// kvHigh is the KV cache usage past which the controller adds no request:
// vLLM preempts sequences when its cache is full.
const kvHigh = 0.9

// increaseGain is the share of the gap to the target that a step closes
// upward, after slow start; every step adds at least one.
const increaseGain = 1

// allowance is the requests the decode-speed target adds to the headroom:
// where the knee is a few requests, one request that ends and the next in
// its time to first token leave the server below it (Netflix's Gradient2
// adds a queue size likewise).
const allowance = 2

// requestHeadroom is the headroom when the speed is per running request
// rather than per decoding sequence: the requests in their time to first
// token lower it, the more the shorter the replies.
const requestHeadroom = 1.25

// stepDecode is step on the decode speed of one sequence (the inter-token
// latency), which prefilling requests do not lower: the gradient
// speed/top is 1 below the server's knee and falls past it. The target is
// the load times the gradient times the headroom; slow start grows within
// the step (pace) and ends at the first decrease.
func (l *law) stepDecode(s sample, limit int) (int, string, float64) {
	l.doubled = false
	if s.speed > l.topDecode && s.running >= minTopRunning {
		l.topDecode = s.speed
	}
	top := max(l.topDecode, s.speed)
	target := l.headroom*s.load*s.speed/top + allowance
	if s.waiting > 0.5 || s.kv >= kvHigh {
		target = min(target, s.running)
	}
	base := float64(limit)
	if !s.blocked {
		base = min(base, float64(s.peak))
	}
	paused := l.paused
	l.paused = false
	switch {
	case s.load > target*overTarget || paused && s.load > target:
		if s.peak > limit {
			return limit, "hold", target // a previous decrease is still draining
		}
		l.slowStart = false
		next := int(math.Floor(base * max(maxDecrease, target/s.load)))
		return min(limit, max(l.min, next)), "decrease", target
	case l.slowStart:
		return limit, "slow-start", target
	case s.load < target && s.blocked:
		grow := max(1, int(increaseGain*base*(target/s.load-1)))
		return min(l.max, limit+grow), "increase", target
	}
	return limit, "hold", target
}

// overTarget is how far over the target the load goes before the limit
// decreases: a dead band against noise.
const overTarget = 1.05

// maxDecrease is the most one step takes off the limit, as a factor.
const maxDecrease = 0.5

// law is the control law: additive increase, multiplicative decrease toward
// a target load derived from the throughput (a Vegas-like estimate of the
// requests the server decodes at top speed).
type law struct {
	headroom float64
	min, max int
	// top is the highest per-request token speed seen: the speed of a
	// request that shares the server with no more than it can take.
	// topDecode is the highest decode speed of one sequence seen.
	top, topDecode float64
	// paused: a reading within the step saw the decode speed fall; slow
	// start grows no more until the step decides.
	paused bool
	// slowStart doubles the limit every other step until the first
	// decrease; doubled says the last step doubled it.
	slowStart, doubled bool
}

// step returns the next limit, what it did and the target load. With the
// decode speed of one sequence (s.decode) it is stepDecode; otherwise,
// with the speed per running request (or per call):
//
//   - Target: the server's throughput over the top per-request speed is
//     the number of requests that throughput keeps busy at full speed; the
//     target is that times requestHeadroom. With requests waiting, or the
//     KV cache nearly full, the target is at most those running.
//   - Load above target: the limit is scaled by target/load (at most
//     halved), once the calls of a previous decrease have drained. Every
//     shard reads the same load and target and scales by the same factor,
//     so the total comes to the target in one step.
//   - Load below target, and the limit held calls back: slow start doubles
//     the limit every other step (the step after a doubling reads the new
//     requests in their time to first token, and is not judged); after it,
//     the limit grows by the relative gap, and by at least 1. The equal
//     additive part is what brings shards that started apart to equal
//     shares (Chiu and Jain).
//   - Otherwise the limit holds.
func (l *law) step(s sample, limit int) (int, string, float64) {
	if !s.valid || s.load <= 0 {
		return limit, "hold", 0
	}
	if s.decode {
		return l.stepDecode(s, limit)
	}
	if l.doubled {
		// The requests the doubling added spent part of this interval in
		// their time to first token: the speed reads low. The next
		// interval measures the doubled load cleanly.
		l.doubled = false
		return limit, "hold", 0
	}
	if s.speed > l.top && s.running >= minTopRunning {
		l.top = s.speed
	}
	target := s.load
	if s.speed > 0 {
		// Until a top speed is known (loads of 2 or more), this speed is it.
		top := max(l.top, s.speed)
		target = requestHeadroom * s.running * s.speed / top
	}
	if s.waiting > 0.5 || s.kv >= kvHigh {
		target = min(target, s.running)
	}
	base := float64(limit)
	if !s.blocked {
		base = min(base, float64(s.peak))
	}
	switch {
	case s.load > target*overTarget:
		if s.peak > limit {
			return limit, "hold", target // a previous decrease is still draining
		}
		l.slowStart = false
		next := int(math.Floor(base * max(maxDecrease, target/s.load)))
		next = min(limit, max(l.min, next))
		return next, "decrease", target
	case s.load < target && s.blocked && s.speed > 0:
		if l.slowStart {
			l.doubled = true
			return min(l.max, 2*limit), "slow-start", target
		}
		grow := max(1, int(increaseGain*base*(target/s.load-1)))
		return min(l.max, limit+grow), "increase", target
	}
	return limit, "hold", target
}

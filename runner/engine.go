package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/analysis/vrr"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner/concurrency"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
)

// DefaultConcurrency is the default upper bound on model calls in flight.
// The adaptive controller keeps the calls below it, where the server's
// throughput stops rising; it matters alone with FixedConcurrency.
const DefaultConcurrency = concurrency.DefaultMax

// InitialInFlight is the calls in flight the shards of a model start from
// together, each its share: the controller learns the server's top
// per-request speed at a load below the server's knee, then doubles.
const InitialInFlight = 4

// Config is one engine run: which runs to make and where their results go.
type Config struct {
	// Problems is the whole suite in its order; sharding selects from it.
	Problems []envs.Problem
	// Derail, when not empty, replaces Problems: the engine runs these
	// Derail-550 cases (in order, sharded the same way) with RunDerail.
	Derail []methods.DerailTask
	// contract.Methods to run on every problem of the shard; with Derail, the
	// Derail-550 conditions to run on every case.
	Methods []string
	Options methods.Options
	// Deps' Gate is ignored: the engine makes one from Concurrency.
	Deps methods.Deps
	// Concurrency bounds model calls in flight (default DefaultConcurrency).
	// Unless FixedConcurrency, it is an upper bound: a concurrency
	// controller (runner/concurrency) sets the calls in flight below it from
	// the server's load, so that the shards sharing a server together keep
	// it saturated without oversubscribing it.
	Concurrency int
	// FixedConcurrency keeps Concurrency calls in flight throughout.
	FixedConcurrency bool
	// Signals reads the server's load for the controller. nil: the
	// /metrics page of the client's endpoint when the client names one
	// (model.OpenAI does); the controller falls back on the token
	// throughput of its own calls where that page has no vLLM metrics.
	Signals concurrency.Source
	// Control tunes the controller (Interval, Headroom, Initial, Clock,
	// OnStep); its Max is Concurrency and its Source Signals.
	Control concurrency.Options
	// ShardIndex and ShardCount select problem i when i % ShardCount ==
	// ShardIndex. ShardCount 0 means one shard.
	ShardIndex, ShardCount int
	// Done holds the keys (contract.Record.Key) to skip: a resume's finished
	// runs.
	Done map[string]bool
	// Records receives one JSON line per finished run, written as it
	// finishes. Traces, when not nil, receives the run's trace line.
	Records io.Writer
	Traces  io.Writer
	// Progress, when not nil, is called (from one goroutine) after each run
	// is written.
	Progress func(Progress)
	// Order orders the runs (default OrderLongestFirst): their first calls
	// are admitted in this order, each with its expected reply length as
	// its priority at the Gate.
	Order Order
	// Previous are the records of earlier sessions (a resume's ledger):
	// repot-vrr takes its calibration runs from them when they are done.
	Previous []contract.Record
	// Allowance, when not nil, holds the model calls within the shard's
	// budget cap (concurrency.Allowance; Execute counts the earlier
	// sessions' spending into it): the engine counts each call that returns
	// into it, and looks at the cap again every second while calls wait,
	// so that they start once the cap rises.
	Allowance *concurrency.Allowance
}

// Progress reports the engine's advance.
type Progress struct {
	// Done counts runs finished in this session, Total the runs this session
	// has to make (skipped ones excluded).
	Done, Total int
	// Solved and InfraErrors count among Done.
	Solved, InfraErrors int
	// Last is the record just written.
	Last contract.Record
	// InFlightLimit is the calls in flight the gate admits now (the
	// controller's limit, or the fixed bound).
	InFlightLimit int
}

// Result is what an engine run did.
type Result struct {
	// Records are the runs finished in this session, in the order written.
	Records []contract.Record
	// Skipped counts runs the Done set skipped; Planned the runs attempted.
	Skipped, Planned int
	// Aborted reports that ctx ended before every run finished; the runs
	// still in flight were dropped, not recorded as runs: each one a model
	// call of which had returned is written as an aborted attempt
	// (contract.Record.Aborted), which Records does not hold.
	Aborted bool
	// MaxInFlight is the largest number of model calls in flight at once.
	MaxInFlight int
	// InFlightLimit is the concurrency the shard settled at: the
	// controller's (concurrency.Controller.Settled), or the fixed bound.
	// ConcurrencyMode says where the controller's signals came from
	// (concurrency.ModeServer or ModeCalls; "fixed" without a controller).
	InFlightLimit   int
	ConcurrencyMode string
	// MetricsError is why the controller stopped reading the server's
	// metrics, when it did ("" otherwise).
	MetricsError string
}

// job is one (problem or Derail case, method) run to make.
type job struct {
	id     string
	p      *envs.Problem
	derail *methods.DerailTask
	method string
	// opts, when not nil, replaces the configured options (repot-vrr's
	// calibration and frozen estimates).
	opts *methods.Options
}

// do runs the job.
func (j job) do(ctx context.Context, deps methods.Deps, opts methods.Options) (contract.Record, contract.Trace, error) {
	if j.opts != nil {
		opts = *j.opts
	}
	if j.derail != nil {
		return methods.RunDerail(ctx, deps, opts, *j.derail, j.method)
	}
	return methods.RunProblem(ctx, deps, opts, j.p, j.method)
}

// jobs lists the runs of the configured shard, in order, without the done
// ones; it returns how many were skipped.
func (cfg Config) jobs() ([]job, int) {
	var units []job
	if len(cfg.Derail) > 0 {
		for i := range cfg.Derail {
			if cfg.ShardCount < 1 || i%cfg.ShardCount == cfg.ShardIndex {
				units = append(units, job{id: cfg.Derail[i].Case.CaseID, derail: &cfg.Derail[i]})
			}
		}
	} else {
		shard := ShardProblems(cfg.Problems, cfg.ShardIndex, cfg.ShardCount)
		for i := range shard {
			units = append(units, job{id: shard[i].ProblemID, p: &shard[i]})
		}
	}
	var out []job
	skipped := 0
	for _, u := range units {
		for _, m := range cfg.Methods {
			key := contract.Record{Model: cfg.Options.Model, ProblemID: u.id, Method: m, Derail: cfg.derailKey()}.Key()
			if cfg.Done[key] {
				skipped++
				continue
			}
			u.method = m
			out = append(out, u)
		}
	}
	return out, skipped
}

// finished is a run's outcome sent to the writer.
type finished struct {
	rec   contract.Record
	trace contract.Trace
}

// ShardProblems returns the problems of one shard: problem i belongs to shard
// i % count. count < 1 means a single shard holding everything.
func ShardProblems(problems []envs.Problem, index, count int) []envs.Problem {
	if count < 1 {
		return problems
	}
	var out []envs.Problem
	for i := range problems {
		if i%count == index {
			out = append(out, problems[i])
		}
	}
	return out
}

// Run makes every run of the shard not in cfg.Done: each run in its own
// goroutine, model calls bounded by a Gate so that a run's follow-up call
// goes out as soon as its replay is done. Finished runs are written to
// cfg.Records (and traces) one line each as they finish. When ctx ends, runs
// in flight are dropped (runs that had already finished are still written,
// and the runs in flight whose calls returned as aborted attempts, without
// a trace) and Run returns what finished with Aborted set. An
// error is returned for invalid configuration, an unusable problem, or a
// failed write.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	if err := validate(cfg); err != nil {
		return Result{}, err
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	deps := cfg.Deps
	deps.Gate = concurrency.NewGate(conc)
	if cfg.Allowance != nil {
		deps.Gate.SetAllowance(cfg.Allowance)
		deps.Client = spendingClient{deps.Client, cfg.Allowance}
		defer recheckEvery(ctx, deps.Gate, concurrency.DefaultAllowanceEvery)()
	}
	jobs, skipped := cfg.jobs()
	res = Result{Skipped: skipped, Planned: len(jobs), InFlightLimit: conc, ConcurrencyMode: "fixed"}
	prog := Progress{Total: len(jobs)}
	if !cfg.FixedConcurrency {
		// One controller for both of repot-vrr's passes: the server is
		// the same.
		copts := cfg.Control
		copts.Max, copts.Source = conc, cfg.signals()
		if copts.Initial == 0 {
			// The shards of a model start together: together they start
			// at InitialInFlight, low enough to learn the server's top
			// per-request speed below its knee.
			copts.Initial = max(1, InitialInFlight/max(1, cfg.ShardCount))
		}
		ctl := concurrency.New(copts, deps.Gate)
		deps.Client = observedClient{deps.Client, ctl}
		ctlCtx, stopCtl := context.WithCancel(ctx)
		ctlDone := make(chan struct{})
		go func() { defer close(ctlDone); ctl.Run(ctlCtx) }()
		defer func() { // res is the named result: the caller sees this
			stopCtl()
			<-ctlDone
			res.InFlightLimit, res.ConcurrencyMode = ctl.Settled(), string(ctl.Mode())
			if err := ctl.SourceError(); err != nil {
				res.MetricsError = err.Error()
			}
		}()
	}
	calib, rest := cfg.vrrPhases(jobs)
	if len(calib) > 0 || cfg.needsEstimates(rest) {
		if err := runJobs(ctx, cfg, deps, calib, &res, &prog); err != nil || res.Aborted {
			res.MaxInFlight = deps.Gate.MaxInFlight()
			return res, err
		}
		est := vrr.Calibrate(cfg.calibrationRecords(res.Records), cfg.Options.VRR)
		o := cfg.Options
		o.VRREstimates = &est
		for i := range rest {
			if rest[i].method == contract.MethodVRR {
				rest[i].opts = &o
			}
		}
	}
	err = runJobs(ctx, cfg, deps, rest, &res, &prog)
	res.MaxInFlight = deps.Gate.MaxInFlight()
	return res, err
}

// vrrPhases splits the jobs in two passes when repot-vrr must calibrate
// (no frozen estimates): first its runs on the calibration slice (the
// first CalibrationProblems problems of the shard, in suite order), then
// every other run. Without repot-vrr, or with frozen estimates, every job
// is in the second pass.
func (cfg Config) vrrPhases(jobs []job) (calib, rest []job) {
	if cfg.Options.VRREstimates != nil || !slices.Contains(cfg.Methods, contract.MethodVRR) || len(cfg.Derail) > 0 {
		return nil, jobs
	}
	slice := cfg.calibrationSlice()
	o := cfg.Options
	o.VRRCalibrate = true
	for _, j := range jobs {
		if j.method == contract.MethodVRR && slice[j.id] {
			j.opts = &o
			calib = append(calib, j)
			continue
		}
		rest = append(rest, j)
	}
	return calib, rest
}

// calibrationSlice is the problem ids of repot-vrr's calibration slice:
// CalibrationProblems problems of the shard spread evenly over its suite
// order (problem floor(j*n/c) for j < c), so that a suite sorted by
// environment and complexity gives every stratum its share.
func (cfg Config) calibrationSlice() map[string]bool {
	return CalibrationSlice(ShardProblems(cfg.Problems, cfg.ShardIndex, cfg.ShardCount), cfg.Options.VRR.Normalized().CalibrationProblems)
}

// CalibrationSlice returns the ids of c problems spread evenly over
// problems (all of them when c >= len(problems)).
func CalibrationSlice(problems []envs.Problem, c int) map[string]bool {
	ids := map[string]bool{}
	n := len(problems)
	for j := 0; j < c && j < n; j++ {
		i := j * n / min(c, n)
		ids[problems[i].ProblemID] = true
	}
	return ids
}

// needsEstimates reports whether a job of jobs is a repot-vrr run that
// waits for the calibration (a resume whose calibration runs are done).
func (cfg Config) needsEstimates(jobs []job) bool {
	if cfg.Options.VRREstimates != nil {
		return false
	}
	for _, j := range jobs {
		if j.method == contract.MethodVRR {
			return true
		}
	}
	return false
}

// calibrationRecords are repot-vrr's calibration runs of this model: those
// of this session and of earlier ones, each key once.
func (cfg Config) calibrationRecords(session []contract.Record) []contract.Record {
	slice := cfg.calibrationSlice()
	var out []contract.Record
	for _, r := range append(append([]contract.Record{}, cfg.Previous...), session...) {
		if r.Method == contract.MethodVRR && r.Model == cfg.Options.Model && r.VRRCalibration && slice[r.ProblemID] {
			out = append(out, r)
		}
	}
	out, _ = summary.Dedupe(out)
	return out
}

// runJobs runs jobs concurrently and writes each finished run, adding to res
// and prog; it sets res.Aborted when ctx ended before every job finished.
func runJobs(ctx context.Context, cfg Config, deps methods.Deps, jobs []job, res *Result, prog *Progress) error {
	orderJobs(jobs, cfg.Order)
	before := len(res.Records)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan finished)
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	failed := func() error {
		errMu.Lock()
		defer errMu.Unlock()
		return firstErr
	}
	for _, j := range jobs {
		wg.Add(1)
		go func(j job) {
			defer wg.Done()
			jctx := ctx
			if cfg.Order != OrderSuite {
				jctx = concurrency.WithPriority(ctx, j.expected())
			}
			rec, tr, err := j.do(jctx, deps, cfg.Options)
			switch {
			case errors.Is(err, methods.ErrAborted) && rec.Aborted:
				// The calls of it that returned are spent: the
				// writer records the attempt (not as a run).
				out <- finished{rec: rec}
				return
			case errors.Is(err, methods.ErrAborted):
				return
			case err != nil:
				fail(err)
				return
			}
			// Always hand a finished run to the writer, also after ctx
			// ended: the writer drains out until every job is done, so
			// this never blocks for good, and a run that finished before
			// an interruption is saved rather than made again on resume.
			out <- finished{rec, tr}
		}(j)
	}
	go func() { wg.Wait(); close(out) }()

	for f := range out {
		if failed() != nil {
			continue // drain
		}
		if f.rec.Aborted {
			if err := writeJSONLine(cfg.Records, f.rec); err != nil {
				fail(fmt.Errorf("writing records: %w", err))
			}
			continue
		}
		f.rec.InFlightLimit = deps.Gate.Limit()
		// The trace first: once a record is in the file, its trace is
		// too, so the ledger sidecar, which uploads the traces before it
		// writes the records it read, never records a run whose trace
		// could still be lost.
		if cfg.Traces != nil {
			if err := writeJSONLine(cfg.Traces, f.trace); err != nil {
				fail(fmt.Errorf("writing traces: %w", err))
				continue
			}
		}
		if err := writeJSONLine(cfg.Records, f.rec); err != nil {
			fail(fmt.Errorf("writing records: %w", err))
			continue
		}
		res.Records = append(res.Records, f.rec)
		prog.Done++
		if f.rec.Success {
			prog.Solved++
		}
		if f.rec.InfraError != "" {
			prog.InfraErrors++
		}
		prog.Last = f.rec
		prog.InFlightLimit = f.rec.InFlightLimit
		if cfg.Progress != nil {
			cfg.Progress(*prog)
		}
	}
	if err := failed(); err != nil {
		return err
	}
	res.Aborted = len(res.Records)-before < len(jobs)
	return nil
}

// signals is the controller's source of server signals: cfg.Signals, or
// the /metrics page of the client's endpoint.
func (cfg Config) signals() concurrency.Source {
	if cfg.Signals != nil {
		return cfg.Signals
	}
	if e, ok := cfg.Deps.Client.(interface{ Endpoint() (string, string) }); ok {
		base, name := e.Endpoint()
		src := concurrency.NewPrometheusSource(base, name)
		if h, ok := cfg.Deps.Client.(interface{ HTTPClient() *http.Client }); ok && h.HTTPClient() != nil {
			// The calls' transport (its dialer resolves the names the
			// calls resolve), with the metrics page's own timeout.
			src.Client = &http.Client{Transport: h.HTTPClient().Transport, Timeout: concurrency.MetricsTimeout}
		}
		return src
	}
	return nil
}

// spendingClient counts each call that returned into the allowance, before
// the call's slot at the gate is released.
type spendingClient struct {
	model.Client
	allowance *concurrency.Allowance
}

func (s spendingClient) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := s.Client.Complete(ctx, req)
	if err == nil {
		s.allowance.Spend(int64(resp.Usage.Completion))
	}
	return resp, err
}

// recheckEvery rechecks the gate's waiting calls every d until ctx ends or
// the returned stop is called (which waits for the loop to end).
func recheckEvery(ctx context.Context, g *concurrency.Gate, d time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				g.Recheck()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// observedClient reports each completed call's tokens and time to the
// concurrency controller (its fallback signal).
type observedClient struct {
	model.Client
	ctl *concurrency.Controller
}

func (o observedClient) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := o.Client.Complete(ctx, req)
	if err == nil {
		o.ctl.Observe(resp.Usage.Completion, resp.Latency)
	}
	return resp, err
}

// validate checks the configuration and that every problem can be decoded,
// so that a bad suite fails before any model call.
func validate(cfg Config) error {
	if cfg.Records == nil {
		return errors.New("engine: no records writer")
	}
	if cfg.Deps.Client == nil || cfg.Deps.Sandbox == nil {
		return errors.New("engine: a model client and a sandbox are required")
	}
	if len(cfg.Methods) == 0 {
		return errors.New("engine: no methods")
	}
	if err := cfg.Options.VRR.Validate(); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if cfg.Order != "" && cfg.Order != OrderLongestFirst && cfg.Order != OrderSuite {
		return fmt.Errorf("engine: unknown order %q (known: %s, %s)", cfg.Order, OrderLongestFirst, OrderSuite)
	}
	for _, m := range cfg.Methods {
		if len(cfg.Derail) > 0 {
			if !contract.ValidCondition(m) {
				return fmt.Errorf("engine: %q is not a Derail-550 condition (use %v)", m, contract.DerailConditions)
			}
			continue
		}
		if !contract.ValidMethod(m) {
			return fmt.Errorf("engine: unknown method %q (known: %v)", m, contract.Methods)
		}
	}
	if cfg.ShardCount > 0 && (cfg.ShardIndex < 0 || cfg.ShardIndex >= cfg.ShardCount) {
		return fmt.Errorf("engine: shard index %d out of range for %d shards", cfg.ShardIndex, cfg.ShardCount)
	}
	if len(cfg.Derail) > 0 {
		return validateDerail(cfg.Derail, cfg.Options.CheckpointStatement)
	}
	seen := map[string]bool{}
	for i := range cfg.Problems {
		p := &cfg.Problems[i]
		if seen[p.ProblemID] {
			return fmt.Errorf("engine: problem id %q appears twice", p.ProblemID)
		}
		seen[p.ProblemID] = true
		if _, err := p.Initial(); err != nil {
			return fmt.Errorf("engine: problem %s: %w", p.ProblemID, err)
		}
		if _, err := p.Goal(); err != nil {
			return fmt.Errorf("engine: problem %s: %w", p.ProblemID, err)
		}
	}
	return nil
}

// validateDerail checks the checkpoint statement and that every case's
// checkpoint problem can be built.
func validateDerail(tasks []methods.DerailTask, statement string) error {
	if _, err := methods.CheckStatement(statement); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	seen := map[string]bool{}
	for _, t := range tasks {
		if seen[t.Case.CaseID] {
			return fmt.Errorf("engine: derail case %q appears twice", t.Case.CaseID)
		}
		seen[t.Case.CaseID] = true
		if _, err := methods.CheckpointProblem(t, statement); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
	}
	return nil
}

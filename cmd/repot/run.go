package repot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/analysis/vrr"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/contract/buildinfo"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/runner"
	"repot.dev/repot-operator/runner/concurrency"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/sandbox"
)

func init() { register(newRunCommand) }

// runFlags are `repot run`'s flags.
type runFlags struct {
	suite, problems       string
	methods               []string
	baseURL, modelName    string
	modelLabel, apiKeyEnv string
	concurrency           int
	out, traces           string
	resume                bool
	shardIndex, shardCnt  int
	repairBudget          int
	thresholdPermille     int
	temperature           float64
	maxTokens             int
	disableThinking       bool
	programTimeout        time.Duration
	programConcurrency    int
	gpuTelemetryURL       string
	awaitLedger           time.Duration
	order                 string
	sandboxMin            string
	conditions            []string
	statement             string
	vrr                   vrr.Config
	baselines             baselineFlags
}

// newRunCommand is `repot run`: evaluate the methods on a suite against a
// model endpoint.
func newRunCommand() *cobra.Command {
	cmd, _ := newRunCommandFlags()
	return cmd
}

// newRunCommandFlags is newRunCommand and the flags it binds.
func newRunCommandFlags() (*cobra.Command, *runFlags) {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run RePoT methods on a suite against an OpenAI-compatible model endpoint",
		Long: "Run the RePoT methods (pot, pot-retry, repot, repot-adaptive, repot-no-prefix, repot-restart, repot-vrr)\n" +
			"and the paper's baselines (cot, self-consistency, vex)\n" +
			"on every problem of a suite against an OpenAI-compatible endpoint. Finished runs are appended to\n" +
			"DIR/records.jsonl and DIR/traces.jsonl as they finish; DIR/summary.json and a table are written at\n" +
			"the end (also after SIGINT/SIGTERM, for what finished). --resume skips the runs DIR already holds.\n" +
			"While DIR/" + contract.BudgetCapFile + " holds a budget cap (a runner pod's ledger sidecars keep it), a model\n" +
			"call starts only while the calls made, those in flight and it, at --max-tokens each, stay within it.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return f.run(c) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.suite, "suite", "", "built-in suite: "+strings.Join(envs.SuiteNames(), ", ")+" (the last two need --problems)")
	fl.StringVar(&f.problems, "problems", "", "JSONL problems file (path or URL) in the PuzzleZoo or PlanBench schema")
	fl.StringSliceVar(&f.methods, "methods", contract.DefaultMethods, "methods to run: "+strings.Join(contract.Methods, ", "))
	fl.StringVar(&f.baseURL, "base-url", "http://127.0.0.1:8000/v1", "OpenAI-compatible API root")
	fl.StringVar(&f.modelName, "model", "", "served model id (default: the first model the endpoint lists)")
	fl.StringVar(&f.modelLabel, "model-label", "", "model name recorded in records and traces (default --model)")
	fl.StringVar(&f.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (unset: no key)")
	fl.IntVar(&f.concurrency, "concurrency", runner.DefaultConcurrency, "model calls in flight at most: below it the runner adapts its calls in flight to the server's load (vLLM /metrics, else its calls' token throughput; docs/concurrency.md)")
	fl.StringVar(&f.order, "order", string(runner.OrderLongestFirst), "run order: "+string(runner.OrderLongestFirst)+
		" (longest expected reply first, from environment and complexity) or "+string(runner.OrderSuite))
	fl.StringVar(&f.out, "out", "repot-out", "output directory")
	fl.StringVar(&f.traces, "traces", "", "traces JSONL file (default DIR/traces.jsonl)")
	fl.BoolVar(&f.resume, "resume", false, "continue DIR: skip runs its records.jsonl holds (infra errors are run again)")
	fl.IntVar(&f.shardIndex, "shard-index", 0, "this shard's index (problem i belongs to shard i % shard-count)")
	fl.IntVar(&f.shardCnt, "shard-count", 1, "number of shards")
	fl.IntVar(&f.repairBudget, "repair-budget", 1, "repot's suffix-repair calls R")
	fl.IntVar(&f.thresholdPermille, "adaptive-threshold-permille", 150, "repot-adaptive: prefix fraction (per mille) below which a failed plan gets a fresh retry")
	fl.Float64Var(&f.temperature, "temperature", 0, "sampling temperature")
	fl.IntVar(&f.maxTokens, "max-tokens", 16384, "max_tokens per completion")
	fl.BoolVar(&f.disableThinking, "disable-thinking", true, "turn extended thinking off (/no_think system prefix and chat_template_kwargs.enable_thinking=false)")
	fl.DurationVar(&f.programTimeout, "program-timeout", 10*time.Second, "wall-clock limit per model program in the sandbox")
	fl.IntVar(&f.programConcurrency, "program-concurrency", 0, "programs running at once, at most (default: one per CPU the container may use); lowered to what the container's memory limit holds at 1 GiB of address space each (docs/operations.md#sizing)")
	fl.StringVar(&f.gpuTelemetryURL, "gpu-telemetry-url", "", "the model server's GPU telemetry (http://HOST:9400/telemetry): read at the start and end of the shard into DIR/"+contract.ReadingsFile)
	fl.DurationVar(&f.awaitLedger, "await-ledger", 0, "in a runner pod: after the last run write DIR/"+contract.RunDoneFile+" and wait up to this long for the ledger-sync sidecar's DIR/"+contract.LedgerSyncedFile+
		"; exit non-zero unless it says the ledger holds every record (0: do not wait)")
	fl.StringVar(&f.sandboxMin, "sandbox-min", string(sandbox.MinSeccomp), "least sandbox confinement to start with: seccomp, seccomp+landlock, seccomp+namespaces or none (see docs/sandbox.md)")
	addDerailFlags(fl, f)
	addVRRFlags(fl, &f.vrr)
	addBaselineFlags(fl, f)
	return cmd, f
}

// addVRRFlags adds repot-vrr's settings and the noisy-verifier ablation
// (docs/vrr.md). 0 takes the engine's default; the engine validates.
func addVRRFlags(fl *pflag.FlagSet, c *vrr.Config) {
	fl.IntVar(&c.Tau, "vrr-tau", 0, fmt.Sprintf("repot-vrr: stop repairing when the expected validity gain of the rounds ahead is at most this many per-mille per 1000 tokens they cost (0: %d)", vrr.DefaultTau))
	fl.IntVar(&c.Votes, "vrr-votes", 0, "verifier votes m cast on each committed plan, 1-99; the verifier's error rates are estimated only with >= 3 (0: 1)")
	fl.IntVar(&c.Noise.FalseAcceptPermille, "verifier-false-accept-permille", 0, "noisy-verifier ablation: chance per vote, in per-mille (0-1000), of accepting an invalid plan (0: exact verifier)")
	fl.IntVar(&c.Noise.FalseRejectPermille, "verifier-false-reject-permille", 0, "noisy-verifier ablation: chance per vote, in per-mille (0-1000), of rejecting a valid plan (0: exact verifier)")
	fl.IntVar(&c.CalibrationProblems, "vrr-calibration-problems", 0, fmt.Sprintf("repot-vrr: problems, the first of the shard in suite order, run with the whole repair budget to calibrate the estimates (0: %d)", vrr.DefaultCalibrationProblems))
	fl.IntVar(&c.MinTrials, "vrr-min-trials", 0, fmt.Sprintf("repot-vrr: calibration trials an environment needs at a round before its own estimate replaces the pooled one (0: %d)", vrr.DefaultMinTrials))
	fl.IntVar(&c.GuardJPermille, "vrr-guard-j-permille", 0, fmt.Sprintf("repot-vrr: estimated verifier discrimination J, in per-mille, below which VRR-Guard replaces VRR-Stop; -1 never, 1001 always (0: %d)", vrr.DefaultGuardJPermille))
	fl.IntVar(&c.GuardMargin, "vrr-guard-margin", 0, fmt.Sprintf("repot-vrr: VRR-Guard's margin, in votes, by which a candidate must beat the incumbent (0: %d)", vrr.DefaultGuardMargin))
}

func (f *runFlags) run(c *cobra.Command) error {
	if err := f.check(); err != nil {
		return err
	}
	problems, derail, err := f.loadProblems()
	if err != nil {
		return err
	}
	if err := f.derailMethods(c, derail != nil); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errw := c.ErrOrStderr()

	apiKey := ""
	if f.apiKeyEnv != "" {
		apiKey = os.Getenv(f.apiKeyEnv)
	}
	if f.modelName == "" {
		if f.modelName, err = firstModel(ctx, f.baseURL, apiKey); err != nil {
			return fmt.Errorf("no --model given and the endpoint's model list failed: %w", err)
		}
		fmt.Fprintf(errw, "using model %q from %s/models\n", f.modelName, strings.TrimSuffix(f.baseURL, "/"))
	}
	if f.modelLabel == "" {
		f.modelLabel = f.modelName
	}
	mc := model.Config{BaseURL: f.baseURL, Model: f.modelName, APIKey: apiKey}
	if f.disableThinking {
		mc.SystemPrefix, mc.ExtraBody = contract.NoThinkPrefix, model.DisableThinkingBody()
	}
	client, err := model.New(mc)
	if err != nil {
		return err
	}
	minimum, err := sandbox.ParseMinimum(f.sandboxMin)
	if err != nil {
		return fmt.Errorf("--sandbox-min: %w", err)
	}
	if err := sandbox.ProtectRunner(); err != nil {
		return fmt.Errorf("sandbox: protect the runner (prctl PR_SET_DUMPABLE): %w", err)
	}
	// Programs at once x their address space must fit the container's
	// memory limit, or its OOM killer ends the whole shard.
	sizing := sandbox.SizeForContainer(f.programConcurrency, 0)
	fmt.Fprintf(errw, "sandbox sizing: %s\n", sizing)
	sb, err := sandbox.NewPython(sandbox.Options{Timeout: f.programTimeout, Concurrency: sizing.Concurrency, MemoryBytes: sizing.MemoryBytes, Min: minimum})
	if err != nil {
		return err
	}
	defer sb.Close()
	out, err := runner.OpenOutput(f.out, f.traces, f.resume)
	if err != nil {
		return err
	}
	defer out.Close()
	if out.DroppedPartial > 0 {
		fmt.Fprintf(errw, "resume: removed a cut-off last line (%d bytes) from %s\n", out.DroppedPartial, out.RecordsPath)
	}

	opts := f.options()
	opts.SandboxMode = sb.Mode()
	// The ledger-sync sidecar copies this file onto the ledger; the operator
	// shows it in the evaluation's status.
	if err := os.WriteFile(filepath.Join(out.Dir, contract.SandboxModeFile), []byte(sb.Mode()+"\n"), 0o644); err != nil {
		return fmt.Errorf("writing the sandbox mode: %w", err)
	}
	// The provenance goes the same way: the ledger-sync sidecar copies it
	// onto the ledger and the operator shows it in status.models[].provenance.
	if err := contract.WriteProvenance(out.Dir, runProvenance(ctx, client, opts)); err != nil {
		fmt.Fprintf(errw, "%v (the run goes on without a provenance record)\n", err)
	}
	pp := &runner.ProgressPrinter{W: errw, TTY: isTerminal(errw), Clock: model.SystemClock}
	cfg := runner.Config{
		Problems: problems, Derail: derail, Methods: f.methods, Options: opts,
		Deps:        methods.Deps{Client: client, Sandbox: sb, Clock: model.SystemClock},
		Concurrency: f.concurrency, ShardIndex: f.shardIndex, ShardCount: f.shardCnt,
		Progress: pp.Update, Order: runner.Order(f.order),
		Allowance: budgetAllowance(out.Dir, f.maxTokens, errw),
	}
	units := fmt.Sprintf("%d problems", len(runner.ShardProblems(problems, f.shardIndex, f.shardCnt)))
	if derail != nil {
		units = fmt.Sprintf("%d of %d Derail cases", (len(derail)-f.shardIndex+f.shardCnt-1)/f.shardCnt, len(derail))
	}
	fmt.Fprintf(errw, "repot run: %s (shard %d of %d), methods %s, model %q at %s, concurrency %d, sandbox %s; %d finished runs already in %s\n",
		units, f.shardIndex, f.shardCnt, strings.Join(f.methods, ","),
		f.modelLabel, f.baseURL, f.concurrency, sb.Mode(), len(contract.DoneKeys(out.Existing)), out.Dir)
	gpuReading := func(ctx context.Context, phase string) {
		if f.gpuTelemetryURL == "" {
			return
		}
		if _, err := recordGPUReading(ctx, &http.Client{Transport: model.NewTransport()}, f.gpuTelemetryURL, out.Dir, f.modelLabel, f.shardIndex, phase); err != nil {
			fmt.Fprintf(errw, "%v (the GPU cost of this shard will be incomplete)\n", err)
		}
	}
	gpuReading(ctx, contract.PhaseStart)
	res, s, err := runner.Execute(ctx, cfg, out)
	pp.Finish()
	gpuReading(context.Background(), contract.PhaseEnd) // also after SIGTERM
	if err != nil {
		return err
	}
	if err := summary.WriteTable(c.OutOrStdout(), s); err != nil {
		return err
	}
	if f.gpuTelemetryURL != "" {
		if err := printGPUCost(c.OutOrStdout(), out.Dir, s); err != nil {
			fmt.Fprintf(errw, "GPU cost: %v\n", err)
		}
	}
	fmt.Fprintf(errw, "concurrency: settled at %d calls in flight (%s)\n", res.InFlightLimit, res.ConcurrencyMode)
	if res.MetricsError != "" {
		fmt.Fprintf(errw, "concurrency: the server's /metrics were not used: %s\n", res.MetricsError)
	}
	fmt.Fprintf(errw, "wrote %s, %s and %s/%s\n", out.RecordsPath, out.TracesPath, out.Dir, contract.SummaryFile)
	if res.Aborted {
		return fmt.Errorf("interrupted: %d of %d runs finished and were saved; rerun with --resume to continue", len(res.Records), res.Planned)
	}
	if f.awaitLedger > 0 {
		if err := newLedgerWait(out.Dir, f.awaitLedger).await(ctx); err != nil {
			return err
		}
		fmt.Fprintf(errw, "the ledger holds every record of %s\n", out.RecordsPath)
	}
	return nil
}

// budgetAllowance holds the calls within the budget cap in DIR's
// contract.BudgetCapFile, which a runner pod's ledger sidecars keep as the
// operator sets it (no file: no cap), each call reserving its max_tokens.
// Waiting on the cap is said once per wait on errw, and a cap file that
// cannot be read once per distinct error.
func budgetAllowance(dir string, maxTokens int, errw io.Writer) *concurrency.Allowance {
	path := filepath.Join(dir, contract.BudgetCapFile)
	lastErr := ""
	return &concurrency.Allowance{
		Read:       func() (contract.BudgetCap, error) { return readBudgetCap(path) },
		CallTokens: int64(maxTokens),
		Clock:      model.SystemClock,
		OnWait:     func(why string) { fmt.Fprintf(errw, "budget: %s\n", why) },
		OnReadError: func(err error) {
			if err.Error() != lastErr {
				lastErr = err.Error()
				fmt.Fprintf(errw, "budget: %v (the last cap read stays in force)\n", err)
			}
		},
	}
}

// readBudgetCap reads a budget cap file: the zero cap when there is none.
func readBudgetCap(path string) (contract.BudgetCap, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return contract.BudgetCap{}, nil
	}
	if err != nil {
		return contract.BudgetCap{}, err
	}
	return contract.ParseBudgetCap(string(b))
}

// options are the engine options the flags set (the sandbox mode aside).
func (f *runFlags) options() methods.Options {
	opts := methods.DefaultOptions()
	opts.Model, opts.Temperature, opts.MaxTokens = f.modelLabel, f.temperature, f.maxTokens
	opts.RepairBudget, opts.AdaptiveThresholdPermille = f.repairBudget, f.thresholdPermille
	opts.CheckpointStatement = f.statement
	opts.VRR = f.vrr
	f.baselineOptions(&opts)
	return opts
}

// check validates flag combinations.
func (f *runFlags) check() error {
	if f.suite == "" && f.problems == "" {
		return errors.New("give --suite NAME or --problems FILE")
	}
	for _, m := range f.methods {
		if f.suite == envs.SuiteDerail {
			break // checked against the conditions once the suite is loaded
		}
		if !contract.ValidMethod(m) {
			return fmt.Errorf("unknown method %q (known: %s)", m, strings.Join(contract.Methods, ", "))
		}
	}
	if err := contract.CheckBaseURL(f.baseURL); err != nil {
		return fmt.Errorf("--base-url %w, such as http://127.0.0.1:8000/v1", err)
	}
	switch {
	case f.concurrency < 1:
		return fmt.Errorf("--concurrency must be at least 1, got %d", f.concurrency)
	case f.shardCnt < 1:
		return fmt.Errorf("--shard-count must be at least 1, got %d", f.shardCnt)
	case f.shardIndex < 0 || f.shardIndex >= f.shardCnt:
		return fmt.Errorf("--shard-index %d is out of range for %d shards", f.shardIndex, f.shardCnt)
	case f.repairBudget < 0:
		return fmt.Errorf("--repair-budget must be >= 0, got %d", f.repairBudget)
	case f.thresholdPermille < 0 || f.thresholdPermille > 1000:
		return fmt.Errorf("--adaptive-threshold-permille must be within 0-1000, got %d", f.thresholdPermille)
	case f.maxTokens < 0:
		return fmt.Errorf("--max-tokens must be >= 0, got %d", f.maxTokens)
	case f.temperature < 0:
		return fmt.Errorf("--temperature must be >= 0, got %g", f.temperature)
	case f.programTimeout <= 0:
		return fmt.Errorf("--program-timeout must be positive, got %v", f.programTimeout)
	case f.programConcurrency < 0:
		return fmt.Errorf("--program-concurrency must be >= 0, got %d", f.programConcurrency)
	case f.awaitLedger < 0:
		return fmt.Errorf("--await-ledger must not be negative, got %v", f.awaitLedger)
	}
	if err := f.checkBaselines(); err != nil {
		return err
	}
	if err := f.vrr.Validate(); err != nil {
		return fmt.Errorf("the --vrr-* / --verifier-* flags: %w", err)
	}
	return nil
}

// loadProblems reads the problems to run: for --suite derail-550 the
// Derail cases of --problems paired with PuzzleZoo-775; for planbench-378
// the PlanBench file; otherwise --problems (PuzzleZoo schema), which wins,
// or the built-in --suite.
func (f *runFlags) loadProblems() ([]envs.Problem, []methods.DerailTask, error) {
	switch {
	case f.suite == envs.SuiteDerail:
		if f.problems == "" {
			return nil, nil, fmt.Errorf("suite %s needs its published file: --problems derail_550.jsonl", f.suite)
		}
		cases, err := envs.LoadDerail(f.problems)
		if err != nil {
			return nil, nil, err
		}
		pz, err := envs.Suite(envs.SuitePuzzleZoo)
		if err != nil {
			return nil, nil, err
		}
		tasks, err := methods.DerailTasks(cases, pz)
		if err != nil {
			return nil, nil, err
		}
		if len(tasks) == 0 {
			return nil, nil, fmt.Errorf("%s holds no Derail cases", f.problems)
		}
		return nil, tasks, nil
	case f.suite == envs.SuitePlanBench && f.problems != "":
		ps, err := envs.LoadPlanBench(f.problems)
		return ps, nil, err
	case f.problems != "":
		ps, err := envs.LoadProblemsFile(f.problems)
		if err != nil {
			return nil, nil, err
		}
		if len(ps) == 0 {
			return nil, nil, fmt.Errorf("%s holds no problems", f.problems)
		}
		return ps, nil, nil
	}
	ps, err := envs.Suite(f.suite)
	return ps, nil, err
}

// firstModel asks the endpoint's /models for the first model id.
func firstModel(ctx context.Context, baseURL, apiKey string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(baseURL, "/")+"/models", nil)
	if err != nil {
		return "", err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := (&http.Client{Transport: model.NewTransport()}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", err
	}
	if len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", errors.New("the endpoint lists no models")
	}
	return list.Data[0].ID, nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// maxServerError bounds the recorded reason /v1/models could not be read.
const maxServerError = 512

// runProvenance is what this run runs with: the binary's build, what the
// server says of itself on /v1/models (or why it could not be asked) and
// the request parameters every call sends.
func runProvenance(ctx context.Context, client *model.OpenAI, opts methods.Options) contract.Provenance {
	var p contract.Provenance
	p.RepotVersion, p.RepotCommit = buildinfo.Version()
	served, err := client.ServedModels(ctx)
	if err != nil {
		p.ServerError = strings.ToValidUTF8(err.Error(), "?")
		if len(p.ServerError) > maxServerError {
			p.ServerError = strings.ToValidUTF8(p.ServerError[:maxServerError], "")
		}
	}
	p.ServedModels = served
	if p.Request, err = client.RequestParameters(opts.Temperature, opts.MaxTokens); err != nil {
		p.ServerError = strings.TrimPrefix(p.ServerError+"; "+err.Error(), "; ")
	}
	p.SystemPrefix = client.SystemPrefix()
	return p
}

package repot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/spf13/cobra"

	"repot.dev/repot-operator/modelserver/gputelemetry"
)

func init() { register(newGPUTelemetryCommand) }

// nvmlLibrary opens the NVML library; tests replace it with go-nvml's
// simulated devices.
var nvmlLibrary = func() nvml.Interface { return nvml.New() }

// DefaultTelemetryPort is where gpu-telemetry (and sim-server --fake-gpu)
// serve /metrics and /telemetry: dcgm-exporter's port.
const DefaultTelemetryPort = 9400

func newGPUTelemetryCommand() *cobra.Command {
	var (
		listen   string
		once     bool
		execute  bool
		interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "gpu-telemetry [--exec -- COMMAND [ARG...]]",
		Short: "Sample the GPUs through NVML every second and serve the readings (Prometheus /metrics, JSON /telemetry)",
		Long: `gpu-telemetry reads every GPU the container was given through NVML once a
second (utilisation, memory, power, total energy, SM clock, ECC and XID errors),
accumulates energy from the driver's energy counter (resets handled),
utilisation and peak memory, and serves them at /metrics in the Prometheus text
format under dcgm-exporter's names and at /telemetry as JSON for the runners.

With --exec it wraps the model server: the operator copies this binary into the
vLLM container and runs
  /repot-tools/repot gpu-telemetry --exec -- vllm serve MODEL ...
so that it sees the GPUs vLLM was given. The command runs as a child with the
same streams; SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are
forwarded to it, and gpu-telemetry exits with its exit code (128+N when signal
N killed it). If NVML fails, the server still runs: /metrics then reports
repot_gpu_up 0 and /telemetry carries the error.

With --once it prints one reading in the Prometheus format and exits: a quick
check that a node's driver and GPUs are usable.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if execute != (len(args) > 0) {
				return errors.New("give a command after -- together with --exec (gpu-telemetry --exec -- vllm serve MODEL), or neither")
			}
			reader := gputelemetry.NewNVMLReader(nvmlLibrary())
			defer reader.Close()
			sampler := gputelemetry.NewSampler(reader, nil)
			sampler.Interval = interval
			if once {
				sampler.Sample()
				samples, readErr := sampler.Latest()
				if readErr != "" {
					return errors.New(readErr)
				}
				return gputelemetry.WritePrometheus(cmd.OutOrStdout(), samples, sampler.Reading(), "")
			}
			logger := log.New(cmd.ErrOrStderr(), "gpu-telemetry: ", log.LstdFlags)
			if !execute {
				ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
				defer stop()
				go sampler.Run(ctx)
				return serveGPUTelemetry(ctx, listen, sampler)
			}
			return wrapWithTelemetry(cmd.Context(), listen, sampler, args, logger)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", fmt.Sprintf(":%d", DefaultTelemetryPort), "address to serve /metrics, /telemetry and /healthz on")
	cmd.Flags().BoolVar(&once, "once", false, "print one reading to stdout and exit")
	cmd.Flags().BoolVar(&execute, "exec", false, "run the command after -- as a child, forward signals to it and exit with its code")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "time between samples")
	return cmd
}

// wrapWithTelemetry runs argv as a child while sampling and serving; it
// returns ExitError with the child's code. A telemetry failure (the port is
// taken, NVML is missing) is logged and never stops the child.
func wrapWithTelemetry(ctx context.Context, listen string, sampler *gputelemetry.Sampler, argv []string, logger *log.Logger) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go sampler.Run(ctx)
	go logGPUProblems(ctx, sampler, logger)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		logger.Printf("cannot serve telemetry on %s (the server runs on without it): %v", listen, err)
	} else {
		srv := &http.Server{Handler: gpuTelemetryHandler(sampler), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	code, err := runChild(ctx, argv, nil)
	if err != nil || code == 0 {
		return err
	}
	return ExitError{Code: code}
}

// serveGPUTelemetry serves gpuTelemetryHandler on listen until ctx ends or
// SIGINT/SIGTERM arrives, then drains the scrapes in flight (up to 5s).
func serveGPUTelemetry(ctx context.Context, listen string, sampler *gputelemetry.Sampler) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: gpuTelemetryHandler(sampler), ReadHeaderTimeout: 10 * time.Second}
	return serveUntilSignal(ctx, srv, ln, 5*time.Second)
}

// gpuTelemetryHandler serves /metrics (the latest samples and the totals;
// repot_gpu_up 0 when NVML fails), /telemetry (the totals as a JSON
// contract.Reading; 503 with the reading when NVML fails) and /healthz.
func gpuTelemetryHandler(sampler *gputelemetry.Sampler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		samples, readErr := sampler.Latest()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		if err := gputelemetry.WritePrometheus(w, samples, sampler.Reading(), readErr); err != nil {
			return // the client went away
		}
	})
	mux.HandleFunc("GET /telemetry", func(w http.ResponseWriter, _ *http.Request) {
		r := sampler.Reading()
		w.Header().Set("Content-Type", "application/json")
		if r.Error != "" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(r)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}

// logGPUProblems logs, every few seconds, a change in what the sampler
// cannot read (NVML failing, a GPU lost) and its recovery, so that the
// server's log says when its GPU readings stopped.
func logGPUProblems(ctx context.Context, sampler *gputelemetry.Sampler, logger *log.Logger) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		samples, problem := sampler.Latest()
		for _, s := range samples {
			if s.Err != "" {
				problem += s.Err + "; "
			}
		}
		switch {
		case problem == last:
		case problem != "":
			logger.Printf("GPU readings incomplete (the server runs on): %s", problem)
		default:
			logger.Printf("GPU readings complete again")
		}
		last = problem
	}
}

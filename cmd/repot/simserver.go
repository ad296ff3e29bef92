package repot

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/modelserver/simserver"
)

func init() { register(newSimServerCommand) }

// newSimServerCommand is `repot sim-server`: the SIMULATED model server.
func newSimServerCommand() *cobra.Command {
	var (
		listen, profile, name string
		seed                  int64
		faults                int
		hang                  time.Duration
		lat                   = simserver.DefaultLatency
		logRequests           bool
		fakeGPU, telemetry    string
	)
	cmd := &cobra.Command{
		Use:   "sim-server",
		Short: "Serve a SIMULATED language model over the OpenAI-compatible API (no GPU needed)",
		Long: "Serve a simulated model (a stand-in for a real one where no GPU exists) on /v1/chat/completions,\n" +
			"/v1/models, /health and /metrics. It reads the RePoT problem from the prompt, solves it, and answers\n" +
			"with a real Python program; its mistakes follow a seeded capability profile (" +
			strings.Join(simserver.ProfileNames(), ", ") + ").\n" +
			"Answers depend only on (seed, prompt), so runs are reproducible at any concurrency. It is a\n" +
			"simulation: its numbers say nothing about any real model.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			prof, err := simserver.LookupProfile(profile)
			if err != nil {
				return err
			}
			logger := log.New(c.ErrOrStderr(), "", log.LstdFlags)
			srv, err := simserver.New(simserver.Options{
				Profile: prof, Seed: seed, ModelName: name, FaultPermille: faults, HangDuration: hang,
				Latency: lat, Logf: logger.Printf, LogRequests: logRequests,
			})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			if fakeGPU != "" {
				stopGPU, err := serveSimulatedGPU(c.Context(), fakeGPU, telemetry, srv, lat, logger)
				if err != nil {
					return err
				}
				defer stopGPU()
			}
			logger.Printf("repot simulation: serving SIMULATED model %q (profile %s: %s; seed %d; faults %d per mille; latency scale %g, cap %g tokens/s) on http://%s/v1",
				srv.ModelName(), prof.Name, prof.Description, seed, faults, lat.Scale, lat.MaxTokensPerSecond, ln.Addr())
			hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second}
			err = serveUntilSignal(c.Context(), hs, ln, 10*time.Second)
			logger.Printf("repot simulation: stopped")
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8000", "address to listen on (in pods: $(POD_IP):8000 or :8000)")
	f.StringVar(&profile, "profile", "strong", "capability profile: "+strings.Join(simserver.ProfileNames(), ", "))
	f.Int64Var(&seed, "seed", 0, "seed of the simulated model's draws")
	f.StringVar(&name, "served-model-name", "", "model id to serve (default sim-<profile>)")
	f.IntVar(&faults, "fault-permille", 0, "rate of injected faults per request, per mille: HTTP 500, 429, connection resets and hangs")
	f.DurationVar(&hang, "hang-duration", 30*time.Second, "how long an injected hang holds a connection before dropping it")
	f.Float64Var(&lat.Scale, "latency-scale", lat.Scale, "real seconds per simulated second (0: answer at once)")
	f.DurationVar(&lat.TTFT, "ttft", lat.TTFT, "simulated time to first token (plus prompt processing)")
	f.Float64Var(&lat.PrefillTokensPerSecond, "prefill-tokens-per-second", lat.PrefillTokensPerSecond, "simulated prompt processing speed (0: instant)")
	f.Float64Var(&lat.DecodeTokensPerSecond, "decode-tokens-per-second", lat.DecodeTokensPerSecond, "simulated decode speed of one sequence")
	f.Float64Var(&lat.MaxTokensPerSecond, "max-tokens-per-second", lat.MaxTokensPerSecond, "simulated decode throughput cap shared by all sequences (continuous batching; 0: none)")
	f.IntVar(&lat.MaxNumSeqs, "max-num-seqs", lat.MaxNumSeqs, "simulated batch limit (vLLM's --max-num-seqs): more requests wait, as vllm:num_requests_waiting (0: none)")
	f.IntVar(&lat.KVCacheTokens, "kv-cache-tokens", lat.KVCacheTokens, "simulated KV cache size in tokens, for vllm:kv_cache_usage_perc (0: 262144)")
	f.BoolVar(&logRequests, "log-requests", false, "log one line per answered request")
	f.StringVar(&fakeGPU, "fake-gpu", "", "back GPU telemetry with a SIMULATED GPU whose power and utilisation follow the decode load: h100 (70 W idle, 700 W at --max-tokens-per-second)")
	f.StringVar(&telemetry, "telemetry-listen", fmt.Sprintf("127.0.0.1:%d", DefaultTelemetryPort), "with --fake-gpu: address to serve the SIMULATED GPU's /metrics and /telemetry on")
	return cmd
}

package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/spf13/cobra"

	"repot.dev/repot-operator/runner/gpu"
)

func init() { register(newGPUTelemetryCommand) }

// nvmlLibrary opens the NVML library; tests replace it with go-nvml's
// simulated devices.
var nvmlLibrary = func() nvml.Interface { return nvml.New() }

func newGPUTelemetryCommand() *cobra.Command {
	var listen string
	var once bool
	cmd := &cobra.Command{
		Use:   "gpu-telemetry",
		Short: "Serve NVML GPU readings (memory, utilization, power, temperature) as Prometheus metrics",
		Long: `gpu-telemetry is the NVML sidecar of vLLM server pods. It reads every GPU the
container was given through NVML and serves the readings at /metrics in the
Prometheus text format. With --once it prints one reading and exits, which is a
quick way to check that a node's driver and GPUs are usable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reader := gpu.NewNVMLReader(nvmlLibrary())
			defer reader.Close()
			if once {
				samples, err := reader.Read()
				if err != nil {
					return err
				}
				return gpu.WritePrometheus(cmd.OutOrStdout(), samples)
			}
			return serveGPUTelemetry(cmd.Context(), listen, reader)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", ":9400", "address to serve /metrics and /healthz on")
	cmd.Flags().BoolVar(&once, "once", false, "print one reading to stdout and exit")
	return cmd
}

// serveGPUTelemetry serves gpuTelemetryHandler on listen until ctx ends or
// SIGINT/SIGTERM arrives, then drains the scrapes in flight (up to 5s) before
// it returns, so that the caller may close the reader.
func serveGPUTelemetry(ctx context.Context, listen string, reader gpu.Reader) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: gpuTelemetryHandler(reader), ReadHeaderTimeout: 10 * time.Second}
	return serveUntilSignal(ctx, srv, ln, 5*time.Second)
}

// gpuTelemetryHandler serves /metrics (a fresh reading per scrape; 503 when
// NVML fails) and /healthz.
func gpuTelemetryHandler(reader gpu.Reader) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		samples, err := reader.Read()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		var buf bytes.Buffer
		if err := gpu.WritePrometheus(&buf, samples); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(buf.Bytes())
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}

package repot

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"repot.dev/repot-operator/modelserver/gputelemetry"
	"repot.dev/repot-operator/modelserver/simserver"
)

// serveSimulatedGPU starts the SIMULATED GPU of `sim-server --fake-gpu`: a
// sampler over go-nvml's mock H100 driven by srv's decode load, served on
// listen like gpu-telemetry's. The returned function stops it.
func serveSimulatedGPU(ctx context.Context, model, listen string, srv *simserver.Server, lat simserver.Latency, logger *log.Logger) (func(), error) {
	if model != "h100" {
		return nil, fmt.Errorf("--fake-gpu %q: the simulated GPUs are: h100", model)
	}
	capacity := lat.MaxTokensPerSecond
	if capacity <= 0 {
		capacity = simserver.DefaultLatency.MaxTokensPerSecond
	}
	sampler := gputelemetry.NewSampler(gputelemetry.NewNVMLReader(gputelemetry.NewSimulatedH100(srv.DecodeLoad, capacity, time.Now)), nil)
	sampler.Simulated = true
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("--telemetry-listen: %w", err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	go sampler.Run(ctx)
	hs := &http.Server{Handler: gpuTelemetryHandler(sampler), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	logger.Printf("repot simulation: SIMULATED %s GPU telemetry (not a measurement: %d W idle to %d W at %g tokens/s) on http://%s/metrics and /telemetry",
		model, gputelemetry.SimIdleMilliwatts/1000, gputelemetry.SimFullMilliwatts/1000, capacity, ln.Addr())
	return func() { cancel(); _ = hs.Close() }, nil
}

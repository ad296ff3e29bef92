package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"repot.dev/repot-operator/runner/gpu"
)

// maxReadingBytes bounds a /telemetry answer (a reading of 8 GPUs is about
// 4 KiB).
const maxReadingBytes = 1 << 20

// recordGPUReading reads the model server's GPU telemetry (url is its
// /telemetry) and appends it, labelled with model, shard and phase, as one
// line to dir/gpu.jsonl, which the ledger sidecar copies into the shard's
// ledger. The reading is only a cost measurement: failing to take it is
// reported and never stops the run.
func recordGPUReading(ctx context.Context, hc *http.Client, url, dir, model string, shard int, phase string) (gpu.Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return gpu.Reading{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return gpu.Reading{}, fmt.Errorf("GPU telemetry: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReadingBytes+1))
	if err != nil {
		return gpu.Reading{}, fmt.Errorf("GPU telemetry: %w", err)
	}
	if len(body) > maxReadingBytes {
		return gpu.Reading{}, fmt.Errorf("GPU telemetry: %s answered more than %d bytes", url, maxReadingBytes)
	}
	// A 503 carries a reading with the NVML error: record it, so the error
	// reaches the status.
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return gpu.Reading{}, fmt.Errorf("GPU telemetry: GET %s: HTTP %d", url, resp.StatusCode)
	}
	r, err := gpu.ParseReading(body)
	if err != nil {
		return gpu.Reading{}, fmt.Errorf("GPU telemetry: %s: %w", url, err)
	}
	r.Model, r.Shard, r.Phase = model, shard, phase
	line, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	f, err := os.OpenFile(filepath.Join(dir, gpu.ReadingsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return r, err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return r, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return r, err
	}
	return r, f.Close()
}

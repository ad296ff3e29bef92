package repot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"repot.dev/repot-operator/analysis/gpucost"
	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/contract"
)

// maxReadingBytes bounds a /telemetry answer (a reading of 8 GPUs is about
// 4 KiB).
const maxReadingBytes = 1 << 20

// recordGPUReading reads the model server's GPU telemetry (url is its
// /telemetry) and appends it, labelled with model, shard and phase, as one
// line to dir/gpu.jsonl, which the ledger sidecar copies into the shard's
// ledger. The reading is only a cost measurement: failing to take it is
// reported and never stops the run.
func recordGPUReading(ctx context.Context, hc *http.Client, url, dir, model string, shard int, phase string) (contract.Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return contract.Reading{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return contract.Reading{}, fmt.Errorf("GPU telemetry: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReadingBytes+1))
	if err != nil {
		return contract.Reading{}, fmt.Errorf("GPU telemetry: %w", err)
	}
	if len(body) > maxReadingBytes {
		return contract.Reading{}, fmt.Errorf("GPU telemetry: %s answered more than %d bytes", url, maxReadingBytes)
	}
	// A 503 carries a reading with the NVML error: record it, so the error
	// reaches the status.
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return contract.Reading{}, fmt.Errorf("GPU telemetry: GET %s: HTTP %d", url, resp.StatusCode)
	}
	r, err := contract.ParseReading(body)
	if err != nil {
		return contract.Reading{}, fmt.Errorf("GPU telemetry: %s: %w", url, err)
	}
	r.Model, r.Shard, r.Phase = model, shard, phase
	line, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	f, err := os.OpenFile(filepath.Join(dir, contract.ReadingsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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

// printGPUCost prints the GPU cost of what dir/gpu.jsonl holds for s's
// model: energy between the first and last reading, joules per solved
// problem and each method's estimated share.
func printGPUCost(w io.Writer, dir string, s summary.Summary) error {
	data, err := os.ReadFile(filepath.Join(dir, contract.ReadingsFile))
	if err != nil {
		return err
	}
	var rs []contract.Reading
	for _, line := range strings.Split(string(data), "\n") {
		if r, err := contract.ParseReading([]byte(line)); err == nil {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 || len(s.Models) == 0 {
		return nil
	}
	c := gpucost.Summarize(rs)
	for _, m := range s.Models {
		solved, tokens := make([]int64, len(m.Methods)), make([]int64, len(m.Methods))
		for i, ms := range m.Methods {
			solved[i], tokens[i] = int64(ms.Solved), ms.Tokens.Completion
		}
		b := gpucost.Break(c, solved, tokens)
		sim := ""
		if c.Simulated {
			sim = " [SIMULATED GPU: not a measurement of any hardware]"
		}
		fmt.Fprintf(w, "GPU%s: %d J over %ds, %s J per solved problem, %s completion tokens per kJ, %d GPU-seconds held\n",
			sim, b.Joules, c.WindowMillis/1000, optInt(b.JoulesPerSolved), optInt(b.TokensPerKilojoule), c.GPUSecondsMeasured)
		for i, ms := range m.Methods {
			fmt.Fprintf(w, "  %-16s estimated %d J, %s J per solved problem\n", ms.Method, b.MethodJoules[i], optInt(b.MethodJoulesPerSolved[i]))
		}
	}
	for _, e := range c.Errors {
		fmt.Fprintf(w, "GPU error: %s\n", e)
	}
	return nil
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

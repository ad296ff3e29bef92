package repot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/modelserver/gputelemetry"
)

func TestRecordGPUReading(t *testing.T) {
	sampler := gputelemetry.NewSampler(gputelemetry.NewNVMLReader(dgxh100.New()), nil)
	sampler.Sample()
	good := httptest.NewServer(gpuTelemetryHandler(sampler))
	defer good.Close()
	broken := httptest.NewServer(gpuTelemetryHandler(sampled(fakeGPUs{err: gputelemetry.ErrNoGPU})))
	defer broken.Close()
	junk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }))
	defer junk.Close()

	dir := t.TempDir()
	for _, phase := range []string{contract.PhaseStart, contract.PhaseEnd} {
		if _, err := recordGPUReading(context.Background(), http.DefaultClient, good.URL+"/telemetry", dir, "m1", 3, phase); err != nil {
			t.Fatal(err)
		}
	}
	// A 503 with the NVML error is recorded, so that the error reaches the status.
	if r, err := recordGPUReading(context.Background(), http.DefaultClient, broken.URL+"/telemetry", dir, "m1", 3, contract.PhaseEnd); err != nil || !strings.Contains(r.Error, "sees no GPU") {
		t.Errorf("no-GPU reading %+v, %v", r, err)
	}
	for _, url := range []string{junk.URL, good.URL + "/nope", "http://127.0.0.1:1/telemetry"} {
		if _, err := recordGPUReading(context.Background(), http.DefaultClient, url, dir, "m1", 3, contract.PhaseEnd); err == nil {
			t.Errorf("%s: recorded, want an error", url)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, contract.ReadingsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), data)
	}
	for i, want := range []string{contract.PhaseStart, contract.PhaseEnd, contract.PhaseEnd} {
		r, err := contract.ParseReading([]byte(lines[i]))
		if err != nil || r.Model != "m1" || r.Shard != 3 || r.Phase != want {
			t.Errorf("line %d: %+v, %v", i+1, r, err)
		}
	}
}

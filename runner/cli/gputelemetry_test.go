package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"repot.dev/repot-operator/runner/gpu"
)

// fakeGPUs is a gpu.Reader with fixed samples or a fixed error.
type fakeGPUs struct {
	samples []gpu.Sample
	err     error
}

func (f fakeGPUs) Read() ([]gpu.Sample, error) { return f.samples, f.err }

func TestGPUTelemetryHandler(t *testing.T) {
	ok := fakeGPUs{samples: []gpu.Sample{{Index: 0, UUID: "GPU-a", Name: "NVIDIA H200", MemoryUsedBytes: 7, MemoryTotalBytes: 9}}}
	tests := []struct {
		name       string
		reader     gpu.Reader
		path       string
		wantStatus int
		wantBody   string
	}{
		{"metrics", ok, "/metrics", http.StatusOK, `repot_gpu_memory_used_bytes{gpu="0",uuid="GPU-a",name="NVIDIA H200"} 7` + "\n"},
		{"nvml failure", fakeGPUs{err: errors.New("NVML could not start")}, "/metrics", http.StatusServiceUnavailable, "NVML could not start"},
		{"healthz", fakeGPUs{err: errors.New("unused")}, "/healthz", http.StatusOK, "ok\n"},
		{"unknown path", ok, "/nope", http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			gpuTelemetryHandler(tc.reader).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if rec.Code != tc.wantStatus {
				t.Errorf("status %d, want %d", rec.Code, tc.wantStatus)
			}
			if body, _ := io.ReadAll(rec.Body); !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("body %q lacks %q", body, tc.wantBody)
			}
		})
	}
}

func TestServeGPUTelemetryStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := serveGPUTelemetry(ctx, "127.0.0.1:0", fakeGPUs{}); err != nil {
		t.Errorf("serve after cancel: %v", err)
	}
}

func TestServeGPUTelemetryReportsListenErrors(t *testing.T) {
	if err := serveGPUTelemetry(context.Background(), "256.0.0.1:bad", fakeGPUs{}); err == nil {
		t.Error("serving on an invalid address succeeded")
	}
}

func TestGPUTelemetryOnce(t *testing.T) {
	defer func(old func() nvml.Interface) { nvmlLibrary = old }(nvmlLibrary)
	nvmlLibrary = func() nvml.Interface { return dgxh100.New() }
	out, err := execute(t, "gpu-telemetry", "--once")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "repot_gpu_memory_total_bytes{"); n != 8 {
		t.Errorf("%d memory readings, want the 8 GPUs of the simulated DGX H100:\n%s", n, out)
	}
}

func TestGPUTelemetryOnceWithoutDriver(t *testing.T) {
	defer func(old func() nvml.Interface) { nvmlLibrary = old }(nvmlLibrary)
	nvmlLibrary = func() nvml.Interface {
		lib := dgxh100.New()
		lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
		return lib
	}
	if _, err := execute(t, "gpu-telemetry", "--once"); err == nil || !strings.Contains(err.Error(), "NVIDIA driver") {
		t.Errorf("err = %v, want one about the driver", err)
	}
}

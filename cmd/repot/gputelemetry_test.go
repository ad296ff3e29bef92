package repot

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/modelserver/gputelemetry"
)

// fakeGPUs is a gputelemetry.Reader with fixed samples or a fixed error.
type fakeGPUs struct {
	samples []gputelemetry.Sample
	err     error
}

func (f fakeGPUs) Read() ([]gputelemetry.Sample, error) { return f.samples, f.err }

func sampled(r gputelemetry.Reader) *gputelemetry.Sampler {
	s := gputelemetry.NewSampler(r, nil)
	s.Sample()
	return s
}

func TestGPUTelemetryHandler(t *testing.T) {
	ok := fakeGPUs{samples: []gputelemetry.Sample{{Index: 0, UUID: "GPU-a", Name: "NVIDIA H200", MemoryUsedBytes: 7 << 20, MemoryTotalBytes: 9 << 20}}}
	broken := fakeGPUs{err: errors.New("NVML could not start")}
	tests := []struct {
		name       string
		reader     gputelemetry.Reader
		path       string
		wantStatus int
		wantBody   string
	}{
		{"metrics", ok, "/metrics", http.StatusOK, `DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",modelName="NVIDIA H200"} 7` + "\n"},
		{"nvml failure in metrics", broken, "/metrics", http.StatusOK, "repot_gpu_up 0\n"},
		{"telemetry", ok, "/telemetry", http.StatusOK, `"uuid":"GPU-a"`},
		{"nvml failure in telemetry", broken, "/telemetry", http.StatusServiceUnavailable, `"error":"NVML could not start"`},
		{"healthz", broken, "/healthz", http.StatusOK, "ok\n"},
		{"unknown path", ok, "/nope", http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			gpuTelemetryHandler(sampled(tc.reader)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
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
	if err := serveGPUTelemetry(ctx, "127.0.0.1:0", sampled(fakeGPUs{})); err != nil {
		t.Errorf("serve after cancel: %v", err)
	}
}

func TestServeGPUTelemetryReportsListenErrors(t *testing.T) {
	if err := serveGPUTelemetry(context.Background(), "256.0.0.1:bad", sampled(fakeGPUs{})); err == nil {
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
	if n := strings.Count(out, "DCGM_FI_DEV_FB_FREE{"); n != 8 {
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

func TestGPUTelemetryExecPassesTheExitCode(t *testing.T) {
	defer func(old func() nvml.Interface) { nvmlLibrary = old }(nvmlLibrary)
	tests := []struct {
		name     string
		noDriver bool
		args     []string
		want     error
	}{
		{"success", false, []string{"sh", "-c", "exit 0"}, nil},
		{"failure code", false, []string{"sh", "-c", "exit 3"}, ExitError{Code: 3}},
		{"killed by a signal", false, []string{"sh", "-c", "kill -KILL $$"}, ExitError{Code: 128 + 9}},
		{"no driver: the server still runs", true, []string{"sh", "-c", "exit 4"}, ExitError{Code: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nvmlLibrary = func() nvml.Interface {
				lib := dgxh100.New()
				if tc.noDriver {
					lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
				}
				return lib
			}
			_, err := execute(t, append([]string{"gpu-telemetry", "--listen=127.0.0.1:0", "--exec", "--"}, tc.args...)...)
			if !errors.Is(err, tc.want) && err != tc.want {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := execute(t, "gpu-telemetry", "--exec", "--", "/nonexistent/vllm"); err == nil || !strings.Contains(err.Error(), "cannot run") {
		t.Errorf("missing command: err = %v", err)
	}
	if _, err := execute(t, "gpu-telemetry", "--", "sh"); err == nil || !strings.Contains(err.Error(), "--exec") {
		t.Errorf("a command without --exec: err = %v", err)
	}
}

// TestRunChildForwardsSignals sends SIGTERM to this process, as the kubelet
// does to the container's main process, and expects the child to get it.
func TestRunChildForwardsSignals(t *testing.T) {
	dir := t.TempDir()
	ready := dir + "/ready"
	started := make(chan int, 1)
	result := make(chan int, 1)
	go func() {
		code, err := runChild(context.Background(), []string{"sh", "-c", `trap 'exit 7' TERM; touch "$0"; while :; do sleep 0.05; done`, ready}, func(pid int) { started <- pid })
		if err != nil {
			t.Error(err)
		}
		result <- code
	}()
	<-started
	for i := 0; ; i++ {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if i > 200 {
			t.Fatal("the child never installed its trap")
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := <-result; code != 7 {
		t.Errorf("exit code %d, want 7 from the child's SIGTERM trap", code)
	}
}

func TestTelemetryReadingDecodes(t *testing.T) {
	rec := httptest.NewRecorder()
	gpuTelemetryHandler(sampled(gputelemetry.NewNVMLReader(dgxh100.New()))).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/telemetry", nil))
	r, err := contract.ParseReading(rec.Body.Bytes())
	if err != nil || len(r.GPUs) != 8 {
		t.Errorf("reading %+v, err %v", r, err)
	}
}

func TestSimServerFakeGPU(t *testing.T) {
	if _, err := execute(t, "sim-server", "--listen=127.0.0.1:0", "--fake-gpu", "a100"); err == nil || !strings.Contains(err.Error(), "h100") {
		t.Errorf("unknown simulated GPU: err = %v", err)
	}
}

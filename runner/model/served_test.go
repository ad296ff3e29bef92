package model

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/contract"
)

// TestServedModels reads a vLLM-shaped /v1/models: the client's own model
// first, root and max_model_len kept, a server that omits them tolerated.
func TestServedModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[
 {"id":"lora","object":"model","created":1,"owned_by":"vllm","root":"/adapters/lora","parent":"test-model"},
 {"id":"test-model","object":"model","created":1,"owned_by":"vllm","root":"Qwen/Qwen3-8B","max_model_len":40960}]}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, &fakeSleeper{}, nil)
	got, err := c.ServedModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.ServedModel{
		{ID: "test-model", Root: "Qwen/Qwen3-8B", MaxModelLen: ptr.To[int64](40960)},
		{ID: "lora", Root: "/adapters/lora"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("served models (-want +got):\n%s", diff)
	}
}

func TestServedModelsError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	c := newTestClient(t, srv.URL, &fakeSleeper{}, nil)
	if _, err := c.ServedModels(context.Background()); err == nil {
		t.Fatal("no error from a server without /v1/models")
	}
}

// TestServedModelsRetries: a server that refuses the first calls (as a
// Service does for a moment after its server turns Ready) is asked again
// with the client's backoff, and what it then serves is returned; one that
// keeps failing gives an error that counts the attempts.
func TestServedModelsRetries(t *testing.T) {
	served := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"test-model","object":"model","created":1,"owned_by":"vllm"}]}`)
	}
	s := &script{steps: []func(http.ResponseWriter, *http.Request){status(503), status(502), served}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	sl := &fakeSleeper{}
	got, err := newTestClient(t, srv.URL, sl, nil).ServedModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]contract.ServedModel{{ID: "test-model"}}, got); diff != "" {
		t.Errorf("served models (-want +got):\n%s", diff)
	}
	if s.attempts() != 3 || len(sl.waits) != 2 {
		t.Errorf("%d attempts and %d waits, want 3 and 2", s.attempts(), len(sl.waits))
	}

	failing := &script{steps: []func(http.ResponseWriter, *http.Request){status(503)}}
	srv2 := httptest.NewServer(failing)
	defer srv2.Close()
	_, err = newTestClient(t, srv2.URL, &fakeSleeper{}, nil).ServedModels(context.Background())
	if err == nil || !strings.Contains(err.Error(), "4 attempts") {
		t.Errorf("error %v, want one after the policy's 4 attempts", err)
	}
	if failing.attempts() != 4 {
		t.Errorf("%d attempts, want 4", failing.attempts())
	}

	notFound := &script{steps: []func(http.ResponseWriter, *http.Request){status(404)}}
	srv3 := httptest.NewServer(notFound)
	defer srv3.Close()
	if _, err := newTestClient(t, srv3.URL, &fakeSleeper{}, nil).ServedModels(context.Background()); err == nil || notFound.attempts() != 1 {
		t.Errorf("a 404 is not retried: error %v after %d attempts", err, notFound.attempts())
	}
}

// TestRequestParametersAreWhatIsSent compares the recorded parameters with
// the body of a real request: everything but the model and the messages.
func TestRequestParametersAreWhatIsSent(t *testing.T) {
	for _, mut := range []func(*Config){
		func(c *Config) { c.ExtraBody, c.SystemPrefix = DisableThinkingBody(), contract.NoThinkPrefix },
		func(c *Config) { c.MaxCompletionTokens = true },
	} {
		s := &script{steps: []func(http.ResponseWriter, *http.Request){ok}}
		srv := httptest.NewServer(s)
		c := newTestClient(t, srv.URL, &fakeSleeper{}, mut)
		r := Request{Messages: []contract.Message{{Role: contract.RoleUser, Content: "solve"}}, Temperature: 0.7, MaxTokens: 2048}
		if _, err := c.Complete(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		recorded, err := c.RequestParameters(r.Temperature, r.MaxTokens)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]any{}
		for k, v := range recorded {
			var x any
			if err := json.Unmarshal(v, &x); err != nil {
				t.Fatal(err)
			}
			got[k] = x
		}
		sent := s.bodies[0]
		delete(sent, "model")
		delete(sent, "messages")
		if diff := cmp.Diff(sent, got); diff != "" {
			t.Errorf("recorded parameters differ from the sent body (-sent +recorded):\n%s", diff)
		}
	}
}

func TestServedModelDescribe(t *testing.T) {
	for _, tc := range []struct {
		in   contract.ServedModel
		want string
	}{
		{contract.ServedModel{ID: "m"}, "m"},
		{contract.ServedModel{ID: "m", Root: "org/m"}, "m, root org/m"},
		{contract.ServedModel{ID: "m", MaxModelLen: ptr.To[int64](8192)}, "m, max_model_len 8192"},
		{contract.ServedModel{ID: "m", Root: "org/m", MaxModelLen: ptr.To[int64](0)}, "m, root org/m, max_model_len 0"},
	} {
		if got := tc.in.Describe(); got != tc.want {
			t.Errorf("%+v.Describe() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

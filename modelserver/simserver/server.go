package simserver

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"
)

// OwnedBy is the owner of the simulated models in /v1/models.
const OwnedBy = "repot-simulation"

// Options configure a simulated server.
type Options struct {
	// Profile is the capability profile.
	Profile *Profile
	// Seed selects the simulated model's draws.
	Seed int64
	// ModelName is the served model id; empty means "sim-<profile>".
	ModelName string
	// FaultPermille is the rate of injected faults per request (0-1000).
	FaultPermille int
	// HangDuration is how long a hang fault holds the connection before
	// closing it (it ends early when the client goes away).
	HangDuration time.Duration
	// Latency is the timing model.
	Latency Latency
	// Now is the clock for "created" stamps; nil means time.Now.
	Now func() time.Time
	// Logf logs; nil means log.Printf. LogRequests logs one line per call.
	Logf        func(format string, args ...any)
	LogRequests bool
}

// Server is the simulated OpenAI-compatible server. It is an http.Handler.
type Server struct {
	opt    Options
	mux    *http.ServeMux
	faults *faultPlan
	dec    *decoder
	m      metrics
}

// New returns a server for opt.
func New(opt Options) (*Server, error) {
	if opt.Profile == nil {
		return nil, fmt.Errorf("simserver: a profile is required")
	}
	if opt.FaultPermille < 0 || opt.FaultPermille > 1000 {
		return nil, fmt.Errorf("simserver: fault rate %d per mille is outside 0-1000", opt.FaultPermille)
	}
	if err := opt.Latency.Validate(); err != nil {
		return nil, err
	}
	if opt.HangDuration < 0 {
		return nil, fmt.Errorf("simserver: hang duration %v is negative", opt.HangDuration)
	}
	if opt.ModelName == "" {
		opt.ModelName = "sim-" + opt.Profile.Name
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logf == nil {
		opt.Logf = log.Printf
	}
	s := &Server{opt: opt, mux: http.NewServeMux(), faults: newFaultPlan(opt.FaultPermille), dec: newDecoder(opt.Latency, opt.Now)}
	s.m.init()
	s.mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	s.mux.Handle("GET /metrics", newMetricsHandler(s))
	return s, nil
}

// ModelName is the served model id.
func (s *Server) ModelName() string { return s.opt.ModelName }

// ServeHTTP serves the API; every response says it comes from the
// simulation.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", OwnedBy)
	s.mux.ServeHTTP(w, r)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": s.opt.ModelName, "object": "model", "created": 0, "owned_by": OwnedBy,
			"root": "repot-simulation/" + s.opt.Profile.Name, "max_model_len": 131072,
		}},
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) fail(w http.ResponseWriter, code int, typ, msg string) {
	s.m.request(code)
	var e apiError
	e.Error.Message, e.Error.Type, e.Error.Code = msg, typ, fmt.Sprint(code)
	writeJSON(w, code, e)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "could not read the request body")
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "request body is not valid JSON: "+err.Error())
		return
	}
	if req.Model != s.opt.ModelName {
		s.fail(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist (the repot simulation serves `%s`).", req.Model, s.opt.ModelName))
		return
	}
	if req.Stream {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "streaming is not supported by the repot simulation")
		return
	}
	msgs, err := req.messages()
	if err != nil || len(msgs) == 0 {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "messages must be a non-empty list with text content")
		return
	}
	key := promptKey(s.opt.Seed, msgs)
	switch f := s.faults.next(key); f {
	case Fault500:
		s.m.fault(f)
		s.fail(w, http.StatusInternalServerError, "InternalServerError", "injected fault (repot simulation)")
		return
	case Fault429:
		s.m.fault(f)
		w.Header().Set("Retry-After", "1")
		s.fail(w, http.StatusTooManyRequests, "RateLimitError", "injected rate limit (repot simulation)")
		return
	case FaultReset:
		s.m.fault(f)
		s.hijackClose(w)
		return
	case FaultHang:
		s.m.fault(f)
		t := time.NewTimer(s.opt.HangDuration)
		select {
		case <-r.Context().Done():
		case <-t.C:
		}
		t.Stop()
		s.hijackClose(w)
		return
	}

	s.m.inflight.Add(1)
	defer s.m.inflight.Add(-1)
	var d Decision
	var reply Reply
	answered := false
	call := Call{Messages: msgs, MaxTokens: req.maxTokens(), Seed: req.Seed}
	if req.Temperature != nil {
		call.Temperature = *req.Temperature
	}
	for _, decide := range deciders {
		if d, reply, answered = decide(s.opt.Profile, s.opt.Seed, call); answered {
			break
		}
	}
	if !answered {
		if rd, ok := DecideRecovery(s.opt.Profile, s.opt.Seed, msgs); ok {
			d, reply = rd.Decision, RenderRecovery(rd, req.maxTokens())
		} else {
			d = Decide(s.opt.Profile, s.opt.Seed, msgs)
			reply = Render(d, req.maxTokens(), req.thinking(msgs))
		}
	}
	var resp chatResponse
	resp.ID = "chatcmpl-sim-" + hex.EncodeToString(key.key[:12])
	resp.Object = "chat.completion"
	resp.Created = s.opt.Now().Unix()
	resp.Model = s.opt.ModelName
	resp.SystemFingerprint = OwnedBy + "/" + s.opt.Profile.Name
	resp.Choices = []chatChoice{{Message: responseMessage{Role: "assistant", Content: reply.Content}, FinishReason: reply.FinishReason}}
	u := &resp.Usage
	u.PromptTokens = promptTokens(msgs)
	u.CompletionTokens = Tokens(reply.Content)
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	u.PromptTokensDetails.CachedTokens = cachedTokens(msgs, d)
	u.CompletionTokensDetails.ReasoningTokens = Tokens(reply.Reasoning)
	if err := s.dec.generate(r.Context(), u.PromptTokens, u.CompletionTokens); err != nil {
		s.m.request(499)
		return
	}
	s.m.served(d.Mode, u.PromptTokens, u.CompletionTokens)
	s.m.request(http.StatusOK)
	if s.opt.LogRequests {
		s.opt.Logf("repot simulation: %s answered %s (%s, p=%.2f) prompt=%d completion=%d finish=%s",
			s.opt.ModelName, d.Mode, envName(d), d.Prob, u.PromptTokens, u.CompletionTokens, reply.FinishReason)
	}
	writeJSON(w, http.StatusOK, resp)
}

func envName(d Decision) string {
	if d.Problem == nil {
		return "no problem"
	}
	if d.Repair != nil {
		return d.Problem.Environment + ", repair " + string(d.Repair.Variant)
	}
	return d.Problem.Environment
}

// hijackClose drops the connection without an HTTP response.
func (s *Server) hijackClose(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

package model

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/pagination"

	"repot.dev/repot-operator/contract"
)

// maxServedModels bounds what ServedModels keeps of a long list (hosted
// APIs list hundreds).
const maxServedModels = 8

// ServedModels asks the server's /v1/models (openai-go's Models.List) what
// it serves, retrying retryable failures (a connection refused while the
// Service's endpoints catch up with a server just Ready, a 503) with the
// client's RetryPolicy (withRetries, as Complete): the answer is recorded once per
// runner pod as its provenance, so one early refusal would lose it. Each
// attempt has 30s. The client's own model comes first when listed; at most
// maxServedModels entries are kept.
func (c *OpenAI) ServedModels(ctx context.Context) ([]contract.ServedModel, error) {
	var page *pagination.Page[openai.Model]
	attempts, last, stopped := c.withRetries(ctx, func() *attemptError {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var err error
		if page, err = c.client.Models.List(actx); err != nil {
			return classify(ctx, err, c.cfg.Clock.Now())
		}
		return nil
	})
	switch {
	case stopped != nil:
		return nil, fmt.Errorf("listing the server's models (%d attempts): %w", attempts, stopped)
	case last != nil:
		return nil, fmt.Errorf("listing the server's models (%d attempts): %w", attempts, last.err)
	}
	var own, rest []contract.ServedModel
	for _, m := range page.Data {
		var extra struct {
			Root        string `json:"root"`
			MaxModelLen *int64 `json:"max_model_len"`
		}
		if raw := m.RawJSON(); raw != "" {
			_ = json.Unmarshal([]byte(raw), &extra) // optional fields: a server without them is fine
		}
		s := contract.ServedModel{ID: m.ID, Root: extra.Root, MaxModelLen: extra.MaxModelLen}
		if m.ID == c.cfg.Model {
			own = append(own, s)
		} else {
			rest = append(rest, s)
		}
	}
	out := append(own, rest...)
	if len(out) > maxServedModels {
		out = out[:maxServedModels]
	}
	return out, nil
}

// RequestParameters are the top-level fields the client sends with every
// completion request other than the model and the messages: temperature,
// max_tokens (or max_completion_tokens) and the extra body (e.g.
// chat_template_kwargs), each as its JSON, for a request with the given
// temperature and completion cap. They come from the same code that builds
// each request.
func (c *OpenAI) RequestParameters(temperature float64, maxTokens int) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(c.params(Request{Temperature: temperature, MaxTokens: maxTokens}))
	if err != nil {
		return nil, fmt.Errorf("encoding the request parameters: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("decoding the request parameters: %w", err)
	}
	delete(fields, "model")
	delete(fields, "messages")
	return fields, nil
}

// SystemPrefix is the prefix the client puts before the system prompt.
func (c *OpenAI) SystemPrefix() string { return c.cfg.SystemPrefix }

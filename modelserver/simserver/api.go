package simserver

import (
	"encoding/json"
	"errors"
	"strings"

	"repot.dev/repot-operator/contract"
)

// chatRequest is the part of an OpenAI chat completions request the
// simulation reads.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	Temperature         *float64      `json:"temperature"`
	Seed                *int64        `json:"seed"`
	Stream              bool          `json:"stream"`
	ChatTemplateKwargs  struct {
		EnableThinking *bool `json:"enable_thinking"`
	} `json:"chat_template_kwargs"`
}

// chatMessage accepts string content or an array of text parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (m chatMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", errors.New("message content must be a string or a list of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

func (r *chatRequest) messages() ([]contract.Message, error) {
	out := make([]contract.Message, 0, len(r.Messages))
	for _, m := range r.Messages {
		t, err := m.text()
		if err != nil {
			return nil, err
		}
		out = append(out, contract.Message{Role: m.Role, Content: t})
	}
	return out, nil
}

func (r *chatRequest) maxTokens() int {
	if r.MaxCompletionTokens != nil {
		return *r.MaxCompletionTokens
	}
	if r.MaxTokens != nil {
		return *r.MaxTokens
	}
	return 0
}

// thinking reports whether the request leaves thinking on: neither the
// /no_think system prefix nor enable_thinking=false.
func (r *chatRequest) thinking(msgs []contract.Message) bool {
	if k := r.ChatTemplateKwargs.EnableThinking; k != nil && !*k {
		return false
	}
	for _, m := range msgs {
		if m.Role == contract.RoleSystem && strings.HasPrefix(strings.TrimSpace(m.Content), contract.NoThinkPrefix) {
			return false
		}
	}
	return true
}

// chatResponse is an OpenAI chat completion.
type chatResponse struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	// SystemFingerprint names the simulation and its profile.
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             chatUsage    `json:"usage"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
}

type responseMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// apiError is the OpenAI error body.
type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

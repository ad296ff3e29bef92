package contract

import (
	"strings"
	"testing"
)

func TestCheckBaseURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string // part of the error; "" accepts
	}{
		{"http://127.0.0.1:8000/v1", ""},
		{"https://api.example.com/v1", ""},
		{"http://vllm.team.svc.cluster.local:8000/v1", ""},
		{"http://[::1]:8000/v1", ""},
		{"http://h:65535", ""},
		{"127.0.0.1:8000/v1", "must be an http(s) URL"},
		{"ftp://example.com/v1", "must be an http(s) URL"},
		{"http://", "must be an http(s) URL with a host"},
		{"http://:8000/v1", "must be an http(s) URL with a host"},
		{"http://exa mple.svc:8000/v1", "must be an http(s) URL (parse"},
		{"http://h:99999/v1", "whose port is from 1 to 65535, not 99999"},
		{"http://h:0/v1", "whose port is from 1 to 65535, not 0"},
		{"HTTP://h/v1", "must be an http(s) URL"},
		{"http://h/v1?x=1", "without a query or fragment"},
		{"https://api.example.com#v1", "without a query or fragment"},
		{"http://localhost:1:8000/v1", "must be an http(s) URL ("},
	} {
		err := CheckBaseURL(tc.raw)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckBaseURL(%q) = %v, want nil", tc.raw, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckBaseURL(%q) = %v, want an error containing %q", tc.raw, err, tc.want)
		}
	}
}

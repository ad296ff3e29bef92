package nodeagent

import "testing"

func TestExpand(t *testing.T) {
	vars := map[string]string{"POD_IP": "127.0.0.5", "A": "x"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for _, tc := range []struct{ in, want string }{
		{"--listen=$(POD_IP):8000", "--listen=127.0.0.5:8000"},
		{"$(A)$(A)", "xx"},
		{"$(MISSING)", "$(MISSING)"},
		{"$$(A)", "$(A)"},
		{"cost $5", "cost $5"},
		{"$(A", "$(A"},
		{"end$", "end$"},
		{"plain", "plain"},
	} {
		if got := expand(tc.in, lookup); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

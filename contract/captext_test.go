package contract

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestCapText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short text is kept", "connection reset", 64, "connection reset"},
		{"exactly at the cap is kept", strings.Repeat("a", 16), 16, strings.Repeat("a", 16)},
		{"ascii is cut with the marker", strings.Repeat("a", 40), 16, strings.Repeat("a", 10) + CutMarker},
		// "é" is 2 bytes: 10 bytes of budget hold 5 of them, never half of one.
		{"multi-byte characters are never split", strings.Repeat("é", 20), 16, strings.Repeat("é", 5) + CutMarker},
		// "<" encodes as \u003c (6 bytes): the cap is on the encoded width.
		{"escaped characters count as encoded", strings.Repeat("<", 20), 16, "<" + CutMarker},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb", 64, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CapText(tt.in, tt.n)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CapText (-want +got):\n%s", diff)
			}
			if !utf8.ValidString(got) {
				t.Errorf("CapText returned invalid UTF-8 %q", got)
			}
			b, _ := json.Marshal(got)
			if len(b)-2 > tt.n {
				t.Errorf("CapText's result encodes in %d bytes, more than %d", len(b)-2, tt.n)
			}
		})
	}
}

// TestCapTextsBoundsOutsideFields: every field from outside is cut to
// MaxTextBytes of JSON, whatever it held; the key fields are left alone.
func TestCapTextsBoundsOutsideFields(t *testing.T) {
	huge := strings.Repeat("<stderr \"line\" é\x00\n", 10000)
	r := Record{Model: "m", ProblemID: "p", Method: MethodPoT, InfraError: huge, Environment: huge, Derail: &DerailRecord{InjectionType: huge}}
	r.CapTexts()
	for name, s := range map[string]string{"infra_error": r.InfraError, "environment": r.Environment, "injection_type": r.Derail.InjectionType} {
		b, _ := json.Marshal(s)
		if len(b)-2 > MaxTextBytes || !strings.HasSuffix(s, CutMarker) || !utf8.ValidString(s) {
			t.Errorf("%s: %d encoded bytes (cap %d), cut marker %v, valid UTF-8 %v", name, len(b)-2, MaxTextBytes, strings.HasSuffix(s, CutMarker), utf8.ValidString(s))
		}
	}
	if r.Model != "m" || r.ProblemID != "p" || r.Method != MethodPoT {
		t.Errorf("CapTexts changed the key: %q", r.Key())
	}
}

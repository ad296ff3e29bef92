package repot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCIDRs(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "10.0.0.1/32", want: []string{"10.0.0.1/32"}},
		{in: " 10.0.0.0/24 , 192.168.1.5", want: []string{"10.0.0.0/24", "192.168.1.5/32"}},
		{in: "fd00::1", want: []string{"fd00::1/128"}},
		{in: "10.0.0.0/24,,", want: []string{"10.0.0.0/24"}},
		{in: "10.0.0.0/33", wantErr: true},
		{in: "api.example.com", wantErr: true},
	}
	for _, tc := range cases {
		got, err := parseCIDRs(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseCIDRs(%q) error = %v, want error %t", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("parseCIDRs(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseScraper(t *testing.T) {
	s, err := parseScraper("kubernetes.io/metadata.name=monitoring", "app.kubernetes.io/name in (prometheus, vmagent)")
	if err != nil {
		t.Fatal(err)
	}
	if s.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "monitoring" || len(s.PodSelector.MatchExpressions) != 1 {
		t.Errorf("selectors %v, %v", s.NamespaceSelector, s.PodSelector)
	}
	if s, err := parseScraper("", ""); err != nil || s.NamespaceSelector != nil || s.PodSelector != nil {
		t.Errorf("no flags: %v, %v; want no scraper", s, err)
	}
	if _, err := parseScraper("a in b", ""); err == nil {
		t.Error("a malformed selector is accepted")
	}
}

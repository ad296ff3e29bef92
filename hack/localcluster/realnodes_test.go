package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitRule(t *testing.T) {
	for _, tt := range []struct {
		line    string
		want    []string
		wantErr bool
	}{
		{
			line: `-A POSTROUTING -s 10.88.0.2/32 -m comment --comment "name: \"repot-local-localcluster-real-0\" id: \"015dc1\"" -j CNI-d32cc066ca5983a8ff540210`,
			want: []string{"-A", "POSTROUTING", "-s", "10.88.0.2/32", "-m", "comment", "--comment",
				`name: "repot-local-localcluster-real-0" id: "015dc1"`, "-j", "CNI-d32cc066ca5983a8ff540210"},
		},
		{
			line: `-A CNI-02678b5e4033e573cecc010b ! -d 224.0.0.0/4 -m comment --comment "name: \"repot-local-x\" id: \"0d\"" -j MASQUERADE`,
			want: []string{"-A", "CNI-02678b5e4033e573cecc010b", "!", "-d", "224.0.0.0/4", "-m", "comment", "--comment",
				`name: "repot-local-x" id: "0d"`, "-j", "MASQUERADE"},
		},
		{line: `-A X --comment "open`, wantErr: true},
		{line: `-A`, wantErr: true},
	} {
		got, err := splitRule(tt.line)
		if (err != nil) != tt.wantErr {
			t.Errorf("splitRule(%q) error %v, want error %v", tt.line, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("splitRule(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

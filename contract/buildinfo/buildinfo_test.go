package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	cases := []struct {
		name              string
		bi                debug.BuildInfo
		version, revision string
	}{
		{"clean", debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, "v0.3.0", "abc"},
		{"dirty", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: "abc"}}}, "(devel)", "abc-dirty"},
		{"no vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)", ""},
	}
	for _, tc := range cases {
		v, r := fromBuildInfo(&tc.bi)
		if v != tc.version || r != tc.revision {
			t.Errorf("%s: %q, %q; want %q, %q", tc.name, v, r, tc.version, tc.revision)
		}
	}
}

package envs

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIntList(t *testing.T) {
	n := func(s ...string) []any {
		out := []any{}
		for _, x := range s {
			out = append(out, json.Number(x))
		}
		return out
	}
	cases := []struct {
		raw    string
		want   []any
		wantOK bool
	}{
		{raw: `[3, 0, 2]`, want: n("3", "0", "2"), wantOK: true},
		{raw: " [ -1 ,\t10\n]\r\n", want: n("-1", "10"), wantOK: true},
		{raw: `[]`, want: n(), wantOK: true},
		{raw: `[01]`},
		{raw: `[1,]`},
		{raw: `[1 2]`},
		{raw: `[1.5, 0]`},
		{raw: `[1e3]`},
		{raw: `["A", 0]`},
		{raw: `[1] [2]`},
		{raw: `[-]`},
		{raw: `[`},
	}
	for _, tc := range cases {
		got, ok := intList([]byte(tc.raw))
		if ok != tc.wantOK {
			t.Errorf("intList(%q) ok = %v, want %v", tc.raw, ok, tc.wantOK)
			continue
		}
		if ok {
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("intList(%q) (-want +got):\n%s", tc.raw, diff)
			}
		}
		// Whatever path it takes, decodeRaw agrees with encoding/json.
		want, werr := decodeValue(json.RawMessage(tc.raw))
		have, herr := decodeRaw(json.RawMessage(tc.raw))
		if (werr == nil) != (herr == nil) || !cmp.Equal(want, have) {
			t.Errorf("decodeRaw(%q) = %#v, %v; encoding/json gives %#v, %v", tc.raw, have, herr, want, werr)
		}
	}
}

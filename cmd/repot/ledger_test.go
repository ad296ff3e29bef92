package repot

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestLedgerCommandFlagErrors(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "missing-kubeconfig")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"restore", "--namespace=ns", "--file=/tmp/x"}, "--configmap is required"},
		{[]string{"sync", "--namespace=ns", "--configmap=led-0"}, "--file is required"},
		{[]string{"sync", "--namespace=", "--configmap=led-0", "--file=/tmp/x"}, "--namespace is required"},
		// No usable token and no kubeconfig: the error says both.
		{[]string{"restore", "--namespace=ns", "--configmap=led-0", "--file=/tmp/x",
			"--token-file=" + filepath.Join(t.TempDir(), "none"), "--kubeconfig=" + kubeconfig}, "no usable token file"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c := newLedgerCommand()
			c.SetArgs(tc.args)
			var out bytes.Buffer
			c.SetOut(&out)
			c.SetErr(&out)
			err := c.ExecuteContext(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want it to contain %q", err, tc.want)
			}
		})
	}
}

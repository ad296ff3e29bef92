package reporttest

import (
	"os"
	"testing"
)

// TestOpenPage is a manual probe: REPORT_PAGE=file go test -run TestOpenPage.
func TestOpenPage(t *testing.T) {
	page := os.Getenv("REPORT_PAGE")
	if page == "" {
		t.Skip("set REPORT_PAGE to a report file to open it")
	}
	res := Check(t, page, page+".png", 1)
	t.Log(res)
	for _, c := range res.Charts {
		t.Logf("%+v", c)
	}
}

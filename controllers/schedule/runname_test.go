package schedule

import (
	"testing"
	"time"
)

func TestRunName(t *testing.T) {
	// 2026-12-01T00:05:00Z is minute 29,934,725 of the Unix epoch.
	got := runName("nightly", time.Date(2026, 12, 1, 0, 5, 0, 0, time.UTC))
	if want := "nightly-29934725"; got != want {
		t.Errorf("runName = %q, want %q", got, want)
	}
}

package cronspec

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParse(t *testing.T) {
	cases := []struct {
		schedule, tz string
		wantErr      bool
	}{
		{"*/5 * * * *", "", false},
		{"0 3 * * MON-FRI", "Europe/Paris", false},
		{"@hourly", "", false},
		{"61 * * * *", "", true},
		{"* * * *", "", true},
		{"*/5 * * * *", "Mars/Olympus", true},
		{"*/5 * * * *", "Local", true},
	}
	for _, tc := range cases {
		_, err := Parse(tc.schedule, tc.tz)
		if (err != nil) != tc.wantErr {
			t.Errorf("Parse(%q, %q) error = %v, want error %v", tc.schedule, tc.tz, err, tc.wantErr)
		}
	}
}

func TestDueTimes(t *testing.T) {
	every5, err := Parse("*/5 * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	paris3am, err := Parse("0 3 * * *", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	never, err := Parse("0 0 30 2 *", "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name          string
		sched         interface{ Next(time.Time) time.Time }
		earliest, now string
		wantLast      string
		wantEarlier   int
	}{
		{"nothing due yet", every5, "2026-12-01T00:00:30Z", "2026-12-01T00:04:59Z", "", 0},
		{"one due", every5, "2026-12-01T00:00:30Z", "2026-12-01T00:05:00Z", "2026-12-01T00:05:00Z", 0},
		{"the window itself is not due again", every5, "2026-12-01T00:05:00Z", "2026-12-01T00:09:00Z", "", 0},
		{"three missed after an outage", every5, "2026-12-01T00:05:00Z", "2026-12-01T00:21:00Z", "2026-12-01T00:20:00Z", 2},
		{"time zone: 03:00 in Paris is 02:00 UTC in winter", paris3am, "2026-12-01T00:00:00Z", "2026-12-01T02:00:00Z", "2026-12-01T02:00:00Z", 0},
		{"a schedule that never fires is never due", never, "2026-12-01T00:00:00Z", "2027-12-01T00:00:00Z", "", 0},
		{"a year of outage saturates the count", every5, "2025-12-01T00:00:00Z", "2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z", MaxMissedCount},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			last, n := DueTimes(tc.sched, mustTime(t, tc.earliest), mustTime(t, tc.now))
			got := ""
			if !last.IsZero() {
				got = last.UTC().Format(time.RFC3339)
			}
			if diff := cmp.Diff([]any{tc.wantLast, tc.wantEarlier}, []any{got, n}); diff != "" {
				t.Errorf("DueTimes (-want +got):\n%s", diff)
			}
		})
	}
}

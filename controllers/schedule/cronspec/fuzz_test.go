package cronspec

import (
	"testing"
	"time"
)

// FuzzSchedule: any schedule and time zone a user writes either fails to
// parse with an error or yields due times that are ordered, within the
// window, and found in bounded time; nothing panics.
func FuzzSchedule(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 0 30 2 *", "@hourly", "0 3 * * MON-FRI", "59 23 31 12 SUN", "*/0 * * * *", "1-0 * * * *", ""} {
		f.Add(s, "Europe/Paris", int64(3*3600))
	}
	f.Fuzz(func(t *testing.T, schedule, tz string, span int64) {
		s, err := Parse(schedule, tz)
		if err != nil {
			return
		}
		from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		span = span % (400 * 24 * 3600)
		if span < 0 {
			span = -span
		}
		to := from.Add(time.Duration(span) * time.Second)
		last, earlier := DueTimes(s, from, to)
		if earlier < 0 || earlier > MaxMissedCount {
			t.Fatalf("earlier = %d", earlier)
		}
		if !last.IsZero() && (!last.After(from) || last.After(to)) {
			t.Fatalf("due time %v outside (%v, %v]", last, from, to)
		}
	})
}

package schedule

import (
	"testing"
	"time"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// FuzzSchedule: any schedule and time zone a user writes either fails to
// parse with an error or yields due times that are ordered, within the
// window, and found in bounded time; nothing panics.
func FuzzSchedule(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 0 30 2 *", "@hourly", "0 3 * * MON-FRI", "59 23 31 12 SUN", "*/0 * * * *", "1-0 * * * *", ""} {
		f.Add(s, "Europe/Paris", int64(3*3600))
	}
	f.Fuzz(func(t *testing.T, schedule, tz string, span int64) {
		spec := &repotv1.RepotScheduleSpec{Schedule: schedule, TimeZone: &tz}
		s, err := parseSchedule(spec)
		if err != nil {
			return
		}
		from := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		span = span % (400 * 24 * 3600)
		if span < 0 {
			span = -span
		}
		to := from.Add(time.Duration(span) * time.Second)
		last, earlier := dueTimes(s, from, to)
		if earlier < 0 || earlier > maxMissedCount {
			t.Fatalf("earlier = %d", earlier)
		}
		if !last.IsZero() && (!last.After(from) || last.After(to)) {
			t.Fatalf("due time %v outside (%v, %v]", last, from, to)
		}
	})
}

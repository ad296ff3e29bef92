// Package cronspec reads a RepotSchedule's spec.schedule and spec.timeZone
// and finds the scheduled times that are due. It depends on nothing of
// Kubernetes, so that its fuzz target compiles (instrumented) only this and
// robfig/cron.
package cronspec

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// DefaultTimeZone is the zone of a schedule without spec.timeZone.
const DefaultTimeZone = "Etc/UTC"

// MaxMissedCount bounds how many missed times are counted one by one after a
// long outage; beyond it the count saturates (the decision, which only needs
// the most recent time, is the same).
const MaxMissedCount = 10000

// parser reads the standard five fields and the @descriptors, like CronJob
// (robfig/cron's ParseStandard).
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse parses schedule (spec.schedule) in timeZone (spec.timeZone; empty:
// DefaultTimeZone). The API server already rejects most bad values; this is
// the authority (and the guard for objects written before a validation rule
// existed).
func Parse(schedule, timeZone string) (cron.Schedule, error) {
	tz := timeZone
	if tz == "" {
		tz = DefaultTimeZone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "Local" {
		return nil, fmt.Errorf("spec.timeZone %q is not a time zone of the IANA database", tz)
	}
	s, err := parser.Parse(schedule)
	if err != nil {
		return nil, fmt.Errorf("spec.schedule %q: %v", schedule, err)
	}
	switch sc := s.(type) {
	case *cron.SpecSchedule:
		sc.Location = loc
	case cron.ConstantDelaySchedule:
		// @every is not accepted by the parser flags; kept for safety.
	}
	return s, nil
}

// DueTimes returns the most recent scheduled time in (earliest, now] and how
// many scheduled times of that interval precede it (missed windows, at most
// MaxMissedCount), or a zero time when none is due (robfig/cron's Next
// returns the zero time for a schedule that never fires).
func DueTimes(s cron.Schedule, earliest, now time.Time) (last time.Time, earlier int) {
	n := 0
	for t := s.Next(earliest); !t.IsZero() && !t.After(now); t = s.Next(t) {
		if !last.IsZero() {
			n++
		}
		last = t
		if n >= MaxMissedCount {
			// Saturated: only the most recent time still matters. Look back
			// from now over a window that doubles until it holds a time.
			w := s.Next(t).Sub(t)
			for w > 0 && s.Next(now.Add(-w)).After(now) {
				w *= 2
			}
			for x := s.Next(now.Add(-w)); !x.IsZero() && !x.After(now); x = s.Next(x) {
				last = x
			}
			return last, n
		}
	}
	return last, n
}

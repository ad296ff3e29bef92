package schedule

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// DefaultTimeZone is the zone of a schedule without spec.timeZone.
const DefaultTimeZone = "Etc/UTC"

// maxMissedCount bounds how many missed times are counted one by one after a
// long outage; beyond it the count saturates (the decision, which only needs
// the most recent time, is the same).
const maxMissedCount = 10000

// cronParser reads the standard five fields and the @descriptors, like
// CronJob (robfig/cron's ParseStandard).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseSchedule parses spec.schedule in spec.timeZone. The API server
// already rejects most bad values; this is the authority (and the guard for
// objects written before a validation rule existed).
func parseSchedule(spec *repotv1.RepotScheduleSpec) (cron.Schedule, error) {
	tz := DefaultTimeZone
	if spec.TimeZone != nil && *spec.TimeZone != "" {
		tz = *spec.TimeZone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "Local" {
		return nil, fmt.Errorf("spec.timeZone %q is not a time zone of the IANA database", tz)
	}
	s, err := cronParser.Parse(spec.Schedule)
	if err != nil {
		return nil, fmt.Errorf("spec.schedule %q: %v", spec.Schedule, err)
	}
	switch sc := s.(type) {
	case *cron.SpecSchedule:
		sc.Location = loc
	case cron.ConstantDelaySchedule:
		// @every is not accepted by the parser flags; kept for safety.
	}
	return s, nil
}

// dueTimes returns the most recent scheduled time in (earliest, now] and how
// many scheduled times of that interval precede it (missed windows), or a
// zero time when none is due (robfig/cron's Next returns the zero time for a
// schedule that never fires).
func dueTimes(s cron.Schedule, earliest, now time.Time) (last time.Time, earlier int) {
	n := 0
	for t := s.Next(earliest); !t.IsZero() && !t.After(now); t = s.Next(t) {
		if !last.IsZero() {
			n++
		}
		last = t
		if n >= maxMissedCount {
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

// runName is the deterministic name of the run scheduled at t: the
// schedule's name and the minute since the epoch, as CronJob names its Jobs.
func runName(schedule string, t time.Time) string {
	return fmt.Sprintf("%s-%d", schedule, t.Unix()/60)
}

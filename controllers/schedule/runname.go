package schedule

import (
	"fmt"
	"time"
)

// runName is the deterministic name of the run scheduled at t: the
// schedule's name and the minute since the epoch, as CronJob names its Jobs.
func runName(schedule string, t time.Time) string {
	return fmt.Sprintf("%s-%d", schedule, t.Unix()/60)
}

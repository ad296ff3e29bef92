package runner

import (
	"fmt"
	"io"
	"strings"
	"time"

	"repot.dev/repot-operator/runner/model"
)

// ProgressPrinter shows an engine's progress: on a terminal a bar redrawn in
// place with an ETA, otherwise a plain line at most every Interval (and for
// the last run).
type ProgressPrinter struct {
	W   io.Writer
	TTY bool
	// Clock reads the time for the ETA; nil means the system clock.
	Clock model.Clock
	// Interval between plain lines (default 10s) or bar redraws (100ms).
	Interval time.Duration

	start, last time.Time
	drawn       bool
}

// Update reports p.
func (pp *ProgressPrinter) Update(p Progress) {
	if pp.Clock == nil {
		pp.Clock = model.SystemClock
	}
	now := pp.Clock.Now()
	if pp.start.IsZero() {
		pp.start = now
	}
	interval := pp.Interval
	if interval == 0 {
		interval = 10 * time.Second
		if pp.TTY {
			interval = 100 * time.Millisecond
		}
	}
	final := p.Done == p.Total
	if !final && pp.drawn && now.Sub(pp.last) < interval {
		return
	}
	pp.last, pp.drawn = now, true
	elapsed := now.Sub(pp.start)
	eta := "?"
	if p.Done > 0 && p.Done < p.Total {
		eta = (time.Duration(float64(elapsed) / float64(p.Done) * float64(p.Total-p.Done))).Round(time.Second).String()
	} else if final {
		eta = "0s"
	}
	pct := 100.0
	if p.Total > 0 {
		pct = 100 * float64(p.Done) / float64(p.Total)
	}
	stats := fmt.Sprintf("%d/%d runs %5.1f%%  solved %d  infra %d  elapsed %s  ETA %s",
		p.Done, p.Total, pct, p.Solved, p.InfraErrors, elapsed.Round(time.Second), eta)
	if p.InFlightLimit > 0 {
		stats += fmt.Sprintf("  in flight <= %d", p.InFlightLimit)
	}
	if !pp.TTY {
		fmt.Fprintf(pp.W, "progress: %s\n", stats)
		return
	}
	const width = 30
	filled := width
	if p.Total > 0 {
		filled = width * p.Done / p.Total
	}
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	fmt.Fprintf(pp.W, "\r\x1b[K[%s] %s", bar, stats)
	if final {
		fmt.Fprintln(pp.W)
	}
}

// Finish ends a bar left mid-line (after an interruption).
func (pp *ProgressPrinter) Finish() {
	if pp.TTY && pp.drawn {
		fmt.Fprintln(pp.W)
	}
}

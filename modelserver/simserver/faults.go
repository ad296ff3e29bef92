package simserver

import (
	"fmt"
	"sync"
)

// Fault is an injected infrastructure failure.
type Fault string

// The injected faults.
const (
	FaultNone  Fault = ""
	Fault500   Fault = "500"
	Fault429   Fault = "429"
	FaultReset Fault = "reset"
	FaultHang  Fault = "hang"
)

var faultKinds = []Fault{Fault500, Fault429, FaultReset, FaultHang}

// faultPlan decides faults by (seed, prompt, n), where n counts earlier
// arrivals of the same prompt at this server: the n-th arrival of a prompt
// always meets the same fate, whatever the order of other prompts, so a
// retried call eventually gets through, and the total number of faults a
// run meets is the same at any concurrency.
type faultPlan struct {
	permille int

	mu   sync.Mutex
	seen map[[32]byte]int
}

func newFaultPlan(permille int) *faultPlan {
	return &faultPlan{permille: permille, seen: map[[32]byte]int{}}
}

// next returns the fault for this arrival of the prompt keyed by d.
func (f *faultPlan) next(d drawer) Fault {
	if f.permille <= 0 {
		return FaultNone
	}
	f.mu.Lock()
	n := f.seen[d.key]
	f.seen[d.key] = n + 1
	f.mu.Unlock()
	label := fmt.Sprintf("fault/%d", n)
	if d.u(label) >= float64(f.permille)/1000 {
		return FaultNone
	}
	return faultKinds[pick(d.u(label+"/kind"), []float64{1, 1, 1, 1})]
}

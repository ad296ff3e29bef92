package gpucost

import (
	"fmt"
	"math/bits"
	"sort"

	"repot.dev/repot-operator/contract"
)

// Cost is what a model's readings add up to.
type Cost struct {
	// Readings is the number of readings used.
	Readings int
	// GPUSecondsMeasured is the GPU count times the seconds each telemetry
	// process had run at its last reading, summed over processes: the
	// GPU-seconds the server held while it was measured.
	GPUSecondsMeasured int64
	// WindowMillis is the time between each process's first and last
	// reading, summed over processes.
	WindowMillis int64
	// EnergyMillijoules is, summed over processes and GPUs, the energy
	// between the first and the last reading.
	EnergyMillijoules uint64
	// UtilPermille is the mean GPU utilisation over the same windows, in
	// thousandths; nil when no device reports utilisation.
	UtilPermille *int32
	// PeakMemoryBytes is the largest memory in use on any one GPU.
	PeakMemoryBytes uint64
	XIDErrors       uint64
	ECCUncorrected  uint64
	// Errors are the distinct GPU errors seen (lost GPUs, XID and
	// uncorrected ECC errors), sorted.
	Errors    []string
	Simulated bool
}

// Summarize adds up readings of one model. Readings of the same telemetry
// instance are cumulative, so per instance and GPU the cost is the last
// minus the first; instances (server restarts) add. Readings may come in
// any order and repeat.
func Summarize(readings []contract.Reading) Cost {
	type span struct {
		first, last contract.Reading
	}
	byInst := map[string]*span{}
	var c Cost
	errs := map[string]bool{}
	for _, r := range readings {
		c.Readings++
		c.Simulated = c.Simulated || r.Simulated
		if r.Error != "" {
			errs[r.Error] = true
		}
		s := byInst[r.Instance]
		if s == nil {
			byInst[r.Instance] = &span{first: r, last: r}
			continue
		}
		if r.UptimeMillis < s.first.UptimeMillis {
			s.first = r
		}
		if r.UptimeMillis > s.last.UptimeMillis {
			s.last = r
		}
	}
	var utilInt, sampled uint64
	for _, s := range byInst {
		c.WindowMillis += s.last.UptimeMillis - s.first.UptimeMillis
		c.GPUSecondsMeasured += int64(len(s.last.GPUs)) * (s.last.UptimeMillis / 1000)
		first := map[string]contract.GPUTotals{}
		for _, g := range s.first.GPUs {
			first[g.UUID] = g
		}
		for _, g := range s.last.GPUs {
			f := first[g.UUID] // absent: the GPU appeared later; count from 0
			c.EnergyMillijoules += sub(g.EnergyMillijoules, f.EnergyMillijoules)
			utilInt += sub(g.UtilPercentMillis, f.UtilPercentMillis)
			sampled += sub(g.SampledMillis, f.SampledMillis)
			c.PeakMemoryBytes = max(c.PeakMemoryBytes, g.PeakMemoryBytes)
			c.XIDErrors += g.XIDErrors
			c.ECCUncorrected += g.ECCUncorrected
			if g.Error != "" {
				errs[g.Error] = true
			}
			if g.XIDErrors > 0 {
				errs[fmt.Sprintf("GPU %d (%s) reported %d critical XID errors, the last XID %d", g.Index, g.UUID, g.XIDErrors, g.LastXID)] = true
			}
			if g.ECCUncorrected > 0 {
				errs[fmt.Sprintf("GPU %d (%s) reported %d uncorrected ECC errors", g.Index, g.UUID, g.ECCUncorrected)] = true
			}
		}
	}
	if sampled > 0 {
		// utilInt is percent*ms; per mille = 10 * percent.
		p := int32((utilInt*10 + sampled/2) / sampled)
		c.UtilPermille = &p
	}
	for e := range errs {
		c.Errors = append(c.Errors, e)
	}
	sort.Strings(c.Errors)
	return c
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// Attribute splits total (joules) over the methods in proportion to their
// completion tokens, with the largest-remainder rule so that the parts sum
// to total exactly. With no tokens at all, every part is 0. It is an
// estimate: methods shared the GPU at the same time, and the split assumes
// a completion token costs the same whichever method asked for it.
func Attribute(total int64, tokens []int64) []int64 {
	out := make([]int64, len(tokens))
	var sum int64
	for _, t := range tokens {
		if t > 0 {
			sum += t
		}
	}
	if sum == 0 || total <= 0 {
		return out
	}
	type rem struct {
		i int
		r int64
	}
	rems := make([]rem, 0, len(tokens))
	var given int64
	for i, t := range tokens {
		if t <= 0 {
			continue
		}
		q, r := mulDiv(total, t, sum)
		out[i] = q
		given += q
		rems = append(rems, rem{i, r})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; given < total && k < len(rems); k++ {
		out[rems[k].i]++
		given++
	}
	return out
}

// mulDiv returns a*b/c and the remainder, for non-negative operands with
// b <= c (a method's tokens never exceed the sum), in 128-bit arithmetic.
func mulDiv(a, b, c int64) (q, r int64) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	uq, ur := bits.Div64(hi, lo, uint64(c))
	return int64(uq), int64(ur)
}

// Breakdown is a model's energy figures in whole units, and each method's
// estimated share (Attribute).
type Breakdown struct {
	Joules int64
	// JoulesPerSolved is nil while nothing is solved; TokensPerKilojoule
	// nil while no energy is measured.
	JoulesPerSolved    *int64
	TokensPerKilojoule *int64
	// MethodJoules and MethodJoulesPerSolved are per method, in the order
	// given; estimates.
	MethodJoules          []int64
	MethodJoulesPerSolved []*int64
}

// Break turns a cost into joules per solved problem and tokens per kJ, and
// splits it over methods with solved problems and completion tokens.
func Break(c Cost, solved, tokens []int64) Breakdown {
	b := Breakdown{Joules: int64((c.EnergyMillijoules + 500) / 1000)}
	var allSolved, allTokens int64
	for i := range solved {
		allSolved += solved[i]
		allTokens += tokens[i]
	}
	if allSolved > 0 {
		v := (b.Joules + allSolved/2) / allSolved
		b.JoulesPerSolved = &v
	}
	if c.EnergyMillijoules > 0 {
		v := int64(float64(allTokens)*1e6/float64(c.EnergyMillijoules) + 0.5)
		b.TokensPerKilojoule = &v
	}
	b.MethodJoules = Attribute(b.Joules, tokens)
	b.MethodJoulesPerSolved = make([]*int64, len(solved))
	for i, j := range b.MethodJoules {
		if s := solved[i]; s > 0 {
			v := (j + s/2) / s
			b.MethodJoulesPerSolved[i] = &v
		}
	}
	return b
}

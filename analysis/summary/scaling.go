package summary

import (
	"math/big"
	"sort"

	"repot.dev/repot-operator/contract"
)

// ScalingCell is one (model, environment) cell of the capability-scaling
// sweep: the mean prefix fraction of the failed first plans against the
// success delta of repot over pot-retry on the same problems.
type ScalingCell struct {
	Model       string `json:"model"`
	Environment string `json:"environment"`
	// FailedFirstPlans counts the failed first plans of the cell (taken from
	// the repot runs, whose first call is the pot call); FailedPrefixPermille
	// is their mean verified prefix fraction.
	FailedFirstPlans     int    `json:"failed_first_plans"`
	FailedPrefixPermille int    `json:"failed_prefix_permille"`
	FailedPrefix         string `json:"failed_prefix"`
	// Problems counts the problems both repot and pot-retry finished.
	Problems       int `json:"problems"`
	RePoTSolved    int `json:"repot_solved"`
	PoTRetrySolved int `json:"pot_retry_solved"`
	// DeltaPermille is (RePoTSolved-PoTRetrySolved)/Problems in thousandths
	// (tenths of a point); DeltaPoints formats it ("+3.3").
	DeltaPermille int    `json:"delta_permille"`
	DeltaPoints   string `json:"delta_points"`
}

// ScalingReport is the capability-scaling sweep across models.
type ScalingReport struct {
	// Cells are sorted by model, then environment. Only cells with at least
	// one failed first plan and at least one paired problem are listed.
	Cells []ScalingCell `json:"cells"`
	// SlopeDefined is false when fewer than two distinct prefix fractions
	// exist. SlopeMilli is the least-squares slope of the delta in points
	// against the prefix fraction (0..1), in thousandths, computed exactly
	// from the cells' per-mille figures; Slope formats it with one decimal
	// ("+35.2").
	SlopeDefined bool   `json:"slope_defined"`
	SlopeMilli   int64  `json:"slope_milli"`
	Slope        string `json:"slope"`
}

// Scaling computes the capability-scaling sweep from the records of any
// number of models (each record names its model). Records are deduplicated
// as Aggregate does and infra errors are left out.
func Scaling(records []contract.Record) ScalingReport {
	recs, _ := Dedupe(records)
	type key struct{ model, env string }
	repot := map[key]map[string]contract.Record{}
	retry := map[key]map[string]contract.Record{}
	for _, r := range recs {
		if r.InfraError != "" {
			continue
		}
		k := key{r.Model, r.Environment}
		var m map[key]map[string]contract.Record
		switch r.Method {
		case contract.MethodRePoT:
			m = repot
		case contract.MethodPoTRetry:
			m = retry
		default:
			continue
		}
		if m[k] == nil {
			m[k] = map[string]contract.Record{}
		}
		m[k][r.ProblemID] = r
	}
	keys := make([]key, 0, len(repot))
	for k := range repot {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].model != keys[j].model {
			return keys[i].model < keys[j].model
		}
		return keys[i].env < keys[j].env
	})
	rep := ScalingReport{Cells: []ScalingCell{}, Slope: "n/a"}
	for _, k := range keys {
		c := ScalingCell{Model: k.model, Environment: k.env}
		var prefixSum int64
		for id, r := range repot[k] {
			if !r.InitialSuccess {
				c.FailedFirstPlans++
				prefixSum += int64(r.InitialPrefixPermille)
			}
			b, ok := retry[k][id]
			if !ok {
				continue
			}
			c.Problems++
			if r.Success {
				c.RePoTSolved++
			}
			if b.Success {
				c.PoTRetrySolved++
			}
		}
		if c.FailedFirstPlans == 0 || c.Problems == 0 {
			continue
		}
		c.FailedPrefixPermille = int(roundDiv(prefixSum, int64(c.FailedFirstPlans)))
		c.FailedPrefix = formatPermillePercent(int64(c.FailedPrefixPermille))
		c.DeltaPermille = int(roundDiv(1000*int64(c.RePoTSolved-c.PoTRetrySolved), int64(c.Problems)))
		c.DeltaPoints = formatSignedTenths(int64(c.DeltaPermille))
		rep.Cells = append(rep.Cells, c)
	}
	rep.SlopeMilli, rep.SlopeDefined = slopeMilli(rep.Cells)
	if rep.SlopeDefined {
		rep.Slope = formatSignedTenths(roundDiv(rep.SlopeMilli, 100))
	}
	return rep
}

// slopeMilli is the least-squares slope of y = delta in points against x =
// prefix fraction, times 1000, rounded half away from zero. With P the
// per-mille prefix and D the per-mille delta, x = P/1000 and y = D/10, so the
// slope is 100 * (nΣPD - ΣPΣD) / (nΣP² - (ΣP)²).
func slopeMilli(cells []ScalingCell) (int64, bool) {
	n := big.NewInt(int64(len(cells)))
	sp, sd, spd, spp := new(big.Int), new(big.Int), new(big.Int), new(big.Int)
	for _, c := range cells {
		p, d := big.NewInt(int64(c.FailedPrefixPermille)), big.NewInt(int64(c.DeltaPermille))
		sp.Add(sp, p)
		sd.Add(sd, d)
		spd.Add(spd, new(big.Int).Mul(p, d))
		spp.Add(spp, new(big.Int).Mul(p, p))
	}
	num := new(big.Int).Sub(new(big.Int).Mul(n, spd), new(big.Int).Mul(sp, sd))
	den := new(big.Int).Sub(new(big.Int).Mul(n, spp), new(big.Int).Mul(sp, sp))
	if den.Sign() == 0 {
		return 0, false
	}
	// slope*1000 = 100000 * num / den
	num.Mul(num, big.NewInt(100000))
	q := new(big.Rat).SetFrac(num, den)
	return roundRat(q), true
}

// roundRat rounds a rational half away from zero.
func roundRat(q *big.Rat) int64 {
	num, den := new(big.Int).Abs(q.Num()), q.Denom()
	r := new(big.Int).Quo(new(big.Int).Add(new(big.Int).Mul(num, big.NewInt(2)), den), new(big.Int).Mul(den, big.NewInt(2)))
	if q.Sign() < 0 {
		r.Neg(r)
	}
	return r.Int64()
}

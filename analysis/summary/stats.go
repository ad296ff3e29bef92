package summary

import (
	"fmt"
	"math"
	"math/big"
)

// floatPrec is the precision of the big.Float arithmetic of the interval;
// far more than the per-mille output needs, so the rounding is stable.
const floatPrec = 200

// wilsonZ is the 0.975 quantile of the standard normal distribution.
const wilsonZ = "1.959963984540054"

// exactMcNemarMax is the largest number of discordant pairs for which the
// exact binomial test is computed; beyond it the chi-square approximation
// (which is then very close) is used.
const exactMcNemarMax = 5000

// newRate fills a Rate for solved out of total.
func newRate(solved, total int) Rate {
	r := Rate{Solved: solved, Total: total}
	if total <= 0 {
		r.Percent = "n/a"
		r.Interval = "n/a"
		return r
	}
	r.Permille = int(roundDiv(1000*int64(solved), int64(total)))
	r.LowPermille, r.HighPermille = wilson(solved, total)
	r.Percent = formatPermillePercent(int64(r.Permille))
	r.Interval = "[" + formatPermillePercent(int64(r.LowPermille)) + ", " + formatPermillePercent(int64(r.HighPermille)) + "]"
	return r
}

// wilson returns the 95% Wilson score interval of solved/total in per-mille,
// rounded half up. It uses big.Float so the result does not depend on the
// platform's floating-point contraction.
func wilson(solved, total int) (low, high int) {
	f := func() *big.Float { return new(big.Float).SetPrec(floatPrec) }
	z, _, err := big.ParseFloat(wilsonZ, 10, floatPrec, big.ToNearestEven)
	if err != nil {
		panic(err) // constant
	}
	n := f().SetInt64(int64(total))
	p := f().Quo(f().SetInt64(int64(solved)), n)
	z2 := f().Mul(z, z)
	z2n := f().Quo(z2, n)                               // z²/n
	denom := f().Add(f().SetInt64(1), z2n)              // 1 + z²/n
	center := f().Add(p, f().Quo(z2n, f().SetInt64(2))) // p + z²/2n
	center.Quo(center, denom)
	// sqrt(p(1-p)/n + z²/4n²)
	q := f().Sub(f().SetInt64(1), p)
	v := f().Quo(f().Mul(p, q), n)
	v.Add(v, f().Quo(z2n, f().Mul(f().SetInt64(4), n)))
	half := f().Sqrt(v)
	half.Mul(half, z)
	half.Quo(half, denom)
	lo := f().Sub(center, half)
	hi := f().Add(center, half)
	return clampPermille(toPermille(lo)), clampPermille(toPermille(hi))
}

// toPermille rounds x*1000 half up to an integer.
func toPermille(x *big.Float) int {
	y := new(big.Float).SetPrec(floatPrec).Mul(x, big.NewFloat(1000))
	y.Add(y, big.NewFloat(0.5))
	if y.Sign() < 0 {
		return 0
	}
	i, _ := y.Int64()
	return int(i)
}

func clampPermille(v int) int { return max(0, min(1000, v)) }

// mcnemar returns the test name and the two-sided p-value, formatted, for b
// and c discordant pairs.
func mcnemar(b, c int) (test, p string) {
	n := b + c
	if n > exactMcNemarMax {
		d := math.Abs(float64(b-c)) - 1
		x := d * d / float64(n)
		return "mcnemar-chi2", formatP4(big.NewRat(1, 1).SetFloat64(math.Erfc(math.Sqrt(x / 2))))
	}
	k := min(b, c)
	sum := new(big.Int)
	coef := big.NewInt(1) // C(n, 0)
	for i := 0; i <= k; i++ {
		sum.Add(sum, coef)
		coef.Mul(coef, big.NewInt(int64(n-i)))
		coef.Quo(coef, big.NewInt(int64(i+1)))
	}
	pr := new(big.Rat).SetFrac(new(big.Int).Mul(sum, big.NewInt(2)), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	if pr.Cmp(big.NewRat(1, 1)) > 0 {
		pr.SetInt64(1)
	}
	return "mcnemar-exact", formatP4(pr)
}

// formatP4 formats a probability with four decimals, rounded half up, and
// "<0.0001" for anything that would round to zero while being positive.
func formatP4(p *big.Rat) string {
	x := new(big.Rat).Mul(p, big.NewRat(10000, 1))
	num, den := x.Num(), x.Denom()
	// round half up: floor((2*num + den) / (2*den))
	q := new(big.Int).Quo(new(big.Int).Add(new(big.Int).Mul(num, big.NewInt(2)), den), new(big.Int).Mul(den, big.NewInt(2)))
	v := q.Int64()
	if v == 0 && p.Sign() > 0 {
		return "<0.0001"
	}
	return fmt.Sprintf("%d.%04d", v/10000, v%10000)
}

// roundDiv divides a by b (b > 0), rounding half away from zero.
func roundDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	if a >= 0 {
		return (2*a + b) / (2 * b)
	}
	return -((-2*a + b) / (2 * b))
}

// formatPermillePercent formats thousandths as a percentage with one decimal:
// 625 -> "62.5%".
func formatPermillePercent(v int64) string {
	return formatTenths(v) + "%"
}

// formatTenths formats tenths with one decimal: 625 -> "62.5", -58 -> "-5.8".
func formatTenths(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%d", sign, v/10, v%10)
}

// formatSignedTenths is formatTenths with a leading "+" for non-negative values.
func formatSignedTenths(v int64) string {
	if v >= 0 {
		return "+" + formatTenths(v)
	}
	return formatTenths(v)
}

// formatMilli formats thousandths with two decimals, rounded half up: 1234 ->
// "1.23".
func formatMilli(v int64) string {
	c := roundDiv(v, 10)
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

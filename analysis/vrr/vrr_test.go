package vrr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract"
)

func TestVotesExactAndSeeded(t *testing.T) {
	for _, m := range []int{1, 3, 5} {
		if got := Votes(Noise{}, "p", 2, m, true); got != m {
			t.Errorf("exact verifier, valid plan, %d votes: %d accept", m, got)
		}
		if got := Votes(Noise{}, "p", 2, m, false); got != 0 {
			t.Errorf("exact verifier, invalid plan, %d votes: %d accept", m, got)
		}
	}
	n := Noise{FalseAcceptPermille: 150, FalseRejectPermille: 250}
	if a, b := Votes(n, "p7", 3, 5, true), Votes(n, "p7", 3, 5, true); a != b {
		t.Errorf("the same problem and round gave %d then %d accepting votes", a, b)
	}
	// Over many problems the vote error rates are the configured ones.
	const plans = 20000
	falseAcc, falseRej := 0, 0
	for i := 0; i < plans; i++ {
		id := fmt.Sprintf("problem-%d", i)
		falseRej += 1 - Votes(n, id, 1, 1, true)
		falseAcc += Votes(n, id, 1, 1, false)
	}
	for name, c := range map[string][2]int{"false accept": {falseAcc, 150}, "false reject": {falseRej, 250}} {
		if got := 1000 * c[0] / plans; got < c[1]-15 || got > c[1]+15 {
			t.Errorf("%s rate %d per mille, want about %d", name, got, c[1])
		}
	}
}

func TestEstimateErrorRates(t *testing.T) {
	for _, c := range []struct {
		rho0, rho1, m int
	}{{150, 150, 3}, {100, 300, 5}, {0, 0, 3}, {250, 50, 7}} {
		var accepts []int
		for i := 0; i < 4000; i++ {
			accepts = append(accepts, Votes(Noise{c.rho0, c.rho1}, fmt.Sprintf("q%d", i), 0, c.m, i%5 < 3))
		}
		r0, r1 := EstimateErrorRates(accepts, c.m)
		if d0, d1 := math.Abs(1000*r0-float64(c.rho0)), math.Abs(1000*r1-float64(c.rho1)); d0 > 30 || d1 > 30 {
			t.Errorf("rho0=%d rho1=%d m=%d: estimated %.0f, %.0f", c.rho0, c.rho1, c.m, 1000*r0, 1000*r1)
		}
	}
	if r0, r1 := EstimateErrorRates([]int{0, 1, 1, 0}, 1); r0 != 0 || r1 != 0 {
		t.Errorf("one vote cannot identify the rates; got %v %v", r0, r1)
	}
}

func TestFilterPredictGain(t *testing.T) {
	type out struct{ Filter, Predict, Gain string }
	f := func(x float64) string { return fmt.Sprintf("%.4f", x) }
	got := map[string]out{
		"exact accept":   {f(Filter(0.3, 3, 3, 0, 0)), f(Predict(1, 0.2, 0.1)), f(Gain(1, 0.2, 0.1))},
		"exact reject":   {f(Filter(0.3, 0, 3, 0, 0)), f(Predict(0, 0.2, 0.1)), f(Gain(0, 0.2, 0.1))},
		"noisy majority": {f(Filter(0.5, 2, 3, 0.15, 0.15)), f(Predict(0.5, 0.2, 0.1)), f(Gain(0.5, 0.2, 0.1))},
	}
	want := map[string]out{
		"exact accept":   {"1.0000", "0.9000", "-0.1000"},
		"exact reject":   {"0.0000", "0.2000", "0.2000"},
		"noisy majority": {"0.8500", "0.5500", "0.0500"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if g := GainPer1k(0.05, 1000); g != 50 {
		t.Errorf("GainPer1k(0.05, 1000) = %d, want 50", g)
	}
}

// calibrationRecords are hand-made loops: env a repairs well, env b never.
func calibrationRecords() []contract.Record {
	var recs []contract.Record
	for i := 0; i < 12; i++ {
		env := "a"
		rounds := []contract.Round{{Prefix: 1, Tokens: 500}, {Valid: true, Prefix: 4, Accepts: 3, Tokens: 1000}}
		if i%2 == 1 {
			env = "b"
			rounds = []contract.Round{{Prefix: 1, Tokens: 500}, {Prefix: 1, Tokens: 1000}, {Prefix: 2, Tokens: 1000}}
		}
		if i%4 == 0 {
			rounds = []contract.Round{{Valid: true, Prefix: 3, Accepts: 3, Tokens: 500}}
		}
		recs = append(recs, contract.Record{Model: "m", ProblemID: fmt.Sprintf("p%02d", i), Environment: env, Method: contract.MethodVRR, Rounds: rounds, Votes: 3, VRRCalibration: true})
	}
	return recs
}

func TestCalibrateIsOrderFreeAndPerEnvironment(t *testing.T) {
	recs := calibrationRecords()
	want := Calibrate(recs, Config{Votes: 3})
	for seed := uint64(1); seed <= 5; seed++ {
		shuffled := append([]contract.Record{}, recs...)
		rand.New(rand.NewPCG(seed, 0)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if diff := cmp.Diff(want, Calibrate(shuffled, Config{Votes: 3})); diff != "" {
			t.Fatalf("the estimates depend on the record order (-first +shuffled):\n%s", diff)
		}
	}
	a, b := want.For("a"), want.For("b")
	if a.Environment != "a" || b.Environment != "b" {
		t.Fatalf("environments with data use their own estimates: %+v", want.Environments)
	}
	if a.Rounds[0].AlphaPermille <= b.Rounds[0].AlphaPermille {
		t.Errorf("alpha_1 of a (%d) not above b's (%d)", a.Rounds[0].AlphaPermille, b.Rounds[0].AlphaPermille)
	}
	if want.For("unseen").Environment != "" {
		t.Errorf("an environment without data should use the pooled estimate")
	}
	// Env b's few failures pull its estimate well below a's, though the
	// pooled prior keeps it above zero.
	if la, lb := a.Lookahead(0, 1, 2), b.Lookahead(0, 1, 2); lb <= 0 || 2*lb >= la {
		t.Errorf("lookahead a=%d b=%d: want 0 < b < a/2", la, lb)
	}
	if want.Rho0Permille != 0 || want.Rho1Permille != 0 || want.JPermille != 1000 || want.Guard {
		t.Errorf("unanimous votes give an exact verifier: %+v", want)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, ""},
		{Config{Tau: -1}, "tau -1 is negative"},
		{Config{Votes: 100}, "votes 100 out of range"},
		{Config{Noise: Noise{FalseAcceptPermille: 1001}}, "falseAcceptPermille 1001 out of range"},
		{Config{GuardJPermille: 2000}, "guardJPermille 2000 out of range"},
	} {
		err := c.cfg.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
		}
	}
}

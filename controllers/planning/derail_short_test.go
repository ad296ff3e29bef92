package planning

import (
	"testing"

	"repot.dev/repot-operator/contract"
)

// TestDerailShortNames: every Derail condition has its own abbreviation in
// the Recovery printer column.
func TestDerailShortNames(t *testing.T) {
	seen := map[string]string{}
	for _, c := range contract.DerailConditions {
		s := derailShort[c]
		if s == "" {
			t.Errorf("condition %s has no abbreviation", c)
			continue
		}
		if o, ok := seen[s]; ok {
			t.Errorf("conditions %s and %s share the abbreviation %q", o, c, s)
		}
		seen[s] = c
	}
}

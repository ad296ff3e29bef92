package contract

import (
	"slices"
	"testing"
)

// TestMethodSpecs: the one table of methods is consistent: each name once,
// a known loop, routes that begin with the first plan's success and are
// all known routes, and the paper's and the default methods among them.
func TestMethodSpecs(t *testing.T) {
	routes := []string{RouteInitialSuccess, RouteFreshEmptyPlan, RouteFreshShortPrefix, RouteSuffixRepair, RouteFreshRetry, RouteNoExtraCall}
	seen := map[string]bool{}
	for _, m := range MethodSpecs {
		if seen[m.Name] {
			t.Errorf("%s is in MethodSpecs twice", m.Name)
		}
		seen[m.Name] = true
		if m.Loop != LoopPoT && m.Loop != LoopOwn {
			t.Errorf("%s: loop %q", m.Name, m.Loop)
		}
		if len(m.Routes) == 0 || m.Routes[0] != RouteInitialSuccess {
			t.Errorf("%s: routes %q do not begin with %s", m.Name, m.Routes, RouteInitialSuccess)
		}
		for _, r := range m.Routes {
			if !slices.Contains(routes, r) {
				t.Errorf("%s: unknown route %q", m.Name, r)
			}
		}
		if m.RepairLoop && m.Loop != LoopPoT {
			t.Errorf("%s repairs in the RePoT loop but does not begin with a PoT call", m.Name)
		}
		if got, ok := LookupMethod(m.Name); !ok || got.Name != m.Name {
			t.Errorf("LookupMethod(%q) = %v, %v", m.Name, got, ok)
		}
	}
	for _, list := range [][]string{PaperMethods, DefaultMethods} {
		for _, m := range list {
			if !ValidMethod(m) {
				t.Errorf("%s is not in MethodSpecs", m)
			}
		}
	}
	if ValidMethod("no-such-method") {
		t.Error("ValidMethod accepts an unknown name")
	}
	if !slices.Equal(Methods, methodNames(MethodSpecs)) {
		t.Errorf("Methods %q are not MethodSpecs' names", Methods)
	}
}

package controllers

import (
	"time"

	"repot.dev/repot-operator/controllers/build"
)

// t0 is the fixed "now" of the tests (as in planning's tests).
var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

var testOpts = build.Options{Image: "repot-operator:test"}

package v1alpha1_test

import "testing"

func TestInvalidSchedulesAreRejected(t *testing.T) {
	requireAPIServer(t)
	expectRejected(t, readKind(t, "testdata/schedule/invalid/*.yaml", "RepotSchedule"), 10)
}

func TestValidSchedulesAreAccepted(t *testing.T) {
	requireAPIServer(t)
	expectAccepted(t, append(readKind(t, "testdata/schedule/valid/*.yaml", "RepotSchedule"),
		readKind(t, "../../config/samples/gitops/repotschedule.yaml", "RepotSchedule")...))
}

package build

import (
	"strconv"

	"repot.dev/repot-operator/contract"
)

// readingsFile is where `repot run --gpu-telemetry-url` writes the GPU
// readings in a runner pod.
const readingsFile = workOutPath + "/" + contract.ReadingsFile

// ledgerArgs are the arguments of a runner pod's ledger container; the
// sync sidecar also copies the GPU readings.
func ledgerArgs(verb, ledgerName string, spills int) []string {
	args := []string{"ledger", verb, "--namespace=$(POD_NAMESPACE)", "--configmap=" + ledgerName, "--spills=" + strconv.Itoa(spills), "--file=" + recordsFile}
	if verb == "sync" {
		args = append(args, "--readings-file="+readingsFile)
	}
	return args
}

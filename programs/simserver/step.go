package simserver

import "repot.dev/repot-operator/contract"

// decideStep answers its prompts. (Skeleton: the method's helper replaces this file.)
func decideStep(_ *Profile, _ int64, _ []contract.Message, _ int) (Decision, Reply, bool) {
	return Decision{}, Reply{}, false
}

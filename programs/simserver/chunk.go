package simserver

import "repot.dev/repot-operator/contract"

// decideChunk answers its prompts. (Skeleton: the method's helper replaces this file.)
func decideChunk(_ *Profile, _ int64, _ []contract.Message, _ int) (Decision, Reply, bool) {
	return Decision{}, Reply{}, false
}

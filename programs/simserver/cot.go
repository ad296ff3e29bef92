package simserver

import "repot.dev/repot-operator/contract"

// decideCoT answers its prompts. (Skeleton: the method's helper replaces this file.)
func decideCoT(_ *Profile, _ int64, _ []contract.Message, _ int) (Decision, Reply, bool) {
	return Decision{}, Reply{}, false
}

package simserver

// decideCoT answers its prompts. (Skeleton: the method's helper replaces this file.)
func decideCoT(_ *Profile, _ int64, _ Call) (Decision, Reply, bool) {
	return Decision{}, Reply{}, false
}

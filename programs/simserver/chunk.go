package simserver

// decideChunk answers its prompts. (Skeleton: the method's helper replaces this file.)
func decideChunk(_ *Profile, _ int64, _ Call) (Decision, Reply, bool) {
	return Decision{}, Reply{}, false
}

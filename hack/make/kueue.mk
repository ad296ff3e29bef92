# Kueue for the end-to-end tests (hack/build-cluster-bins.sh kueue). Included by the
# top-level Makefile through `-include hack/make/*.mk`.

.PHONY: kueue-bin
kueue-bin: ## Build the Kueue manager (at go.mod's sigs.k8s.io/kueue version) into bin/kueue when missing.
	@hack/build-cluster-bins.sh kueue

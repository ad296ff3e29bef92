# The image we ship, built and run here (hack/build-image.sh, hack/image-test.sh).
# Included by the Makefile. Both need root, buildah, debootstrap, containerd and
# runc (Debian's packages; .ci/run installs them).

.PHONY: image-bases image-test

image-bases: ## Make the local stand-ins for the Dockerfile's base images (cached in buildah's store).
	hack/build-image.sh bases

image-test: ## Build the image from the Dockerfile (buildah) and run it under containerd as a restricted runner pod runs.
	IMG=$(IMG) hack/image-test.sh

# repot-operator
#
#   make demo   run a RepotEvaluation end to end on a local control plane
#   make test   unit, controller (envtest) and data conformance tests
#
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)

# Fuzz time per target in `make fuzz` (CI runs each target briefly).
FUZZTIME ?= 10s

# go-nvml's cgo bindings name NVML functions the header marks deprecated.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
# Every build and test compiles with -trimpath and the CGO_CFLAGS above, as
# the Dockerfile's build stage does: hack/build-image.sh mounts the host's Go
# build cache into that stage, which then reuses every package compiled here.
ifeq (,$(filter -trimpath,$(GOFLAGS)))
export GOFLAGS := $(strip $(GOFLAGS) -trimpath)
endif

.PHONY: all
all: build

.PHONY: build
build: ## Build the repot binary into bin/.
	$(GO) build -o $(BIN)/repot .

.PHONY: envtest-bin
envtest-bin: ## Build etcd and kube-apiserver into bin/ when missing.
	hack/build-cluster-bins.sh envtest

.PHONY: control-plane
control-plane: ## Build etcd, kube-apiserver, kube-controller-manager and kube-scheduler into bin/ when missing.
	hack/build-cluster-bins.sh control-plane

.PHONY: s3-bin
s3-bin: ## Build versitygw (the S3 server of the artifact tests and the local cluster) into bin/ when missing.
	hack/build-cluster-bins.sh s3

.PHONY: test
test: envtest-bin s3-bin ## Run the tests (envtest uses bin/etcd and bin/kube-apiserver; the artifact store's tests bin/versitygw).
	$(GO) test ./... -count=1

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME.
	hack/fuzz.sh $(FUZZTIME)

.PHONY: bench
bench: ## Run the benchmarks once each.
	$(GO) test ./... -run '^$$' -bench . -benchtime 1x

.PHONY: help
help:
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk -F':.*?## ' '{printf "  %-16s %s\n", $$1, $$2}'

-include hack/make/*.mk

# golangci-lint (.golangci.yml), part of `make verify`. Included by the
# Makefile through `-include hack/make/*.mk`. hack/build-golangci-lint.sh
# pins its version and builds it into bin/ only when missing.

.PHONY: golangci-lint-bin
golangci-lint-bin: ## Build golangci-lint (v2, pinned) into bin/ when missing.
	@hack/build-golangci-lint.sh

.PHONY: lint
lint: golangci-lint-bin ## Run golangci-lint with .golangci.yml (errcheck, staticcheck, revive's exported rule, depguard).
	$(BIN)/golangci-lint run ./...

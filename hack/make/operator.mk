# Operator targets (api/, config/, charts/, Dockerfile). Included by the
# Makefile through `-include hack/make/*.mk`.

CONTROLLER_GEN_VERSION ?= v0.23.0
CONTROLLER_GEN ?= $(BIN)/controller-gen
IMG ?= repot-operator:dev
# The image builder: docker where a Docker engine answers, else buildah
# (daemonless; hack/build-image.sh, with local stand-ins for the base images
# where no registry can be reached).
CONTAINER_TOOL ?= $(shell docker info >/dev/null 2>&1 && echo docker || echo buildah)
KUBECTL ?= kubectl
CHART_DIR := charts/repot-operator

$(CONTROLLER_GEN):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Build controller-gen into bin/ (cached).
	@$(CONTROLLER_GEN) --version | grep -q '$(CONTROLLER_GEN_VERSION)' || { \
		rm -f $(CONTROLLER_GEN); GOBIN=$(BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION); }

.PHONY: generate
generate: controller-gen ## Generate deepcopy code for api/.
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: controller-gen ## Generate the CRD and RBAC from markers; copy the CRD, the role and the admission policies into the chart.
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./controllers/... output:rbac:artifacts:config=config/rbac
	mkdir -p $(CHART_DIR)/crds
	cp config/crd/bases/*.yaml $(CHART_DIR)/crds/
	mkdir -p $(CHART_DIR)/files
	cp config/rbac/role.yaml $(CHART_DIR)/files/manager-role.yaml
	mkdir -p $(CHART_DIR)/files/admission
	cp config/admission/references.yaml config/admission/trust-remote-code.yaml config/admission/operator-writes.yaml $(CHART_DIR)/files/admission/
	$(GO) run ./hack/splitrole -in config/rbac/role.yaml -out config/namespaced/manager_role.yaml
	$(GO) run ./hack/apidocs -crds config/crd/bases -out docs/api-reference.md

.PHONY: fmt
fmt: ## gofmt the tree.
	gofmt -w $$(git ls-files --cached --others --exclude-standard '*.go')

.PHONY: vet
vet: ## go vet the tree.
	$(GO) vet ./...

.PHONY: verify
verify: GENERATED := api/v1alpha1/zz_generated.deepcopy.go config/crd/bases config/rbac/role.yaml config/namespaced/manager_role.yaml $(CHART_DIR)/crds $(CHART_DIR)/files docs/api-reference.md
verify: generate manifests lint ## Regenerate code and manifests; fail on any git difference, unformatted Go file or lint finding.
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
		if [ -n "$$out" ]; then echo "verify: files not gofmt'ed (run make fmt):"; echo "$$out"; exit 1; fi
	@changed=$$(git status --porcelain -- $(GENERATED)); \
		if [ -n "$$changed" ]; then \
			echo "verify: generated files differ from git (run make generate manifests and commit them):"; \
			echo "$$changed"; git --no-pager diff --stat -- $(GENERATED); exit 1; fi
	@echo "verify: generated files are up to date"

.PHONY: helm-lint
helm-lint: manifests ## Lint and render the Helm chart (helm binary when present, else the Go test with the Helm library).
	@if command -v helm >/dev/null 2>&1; then \
		helm lint --strict $(CHART_DIR) && helm template repot-operator $(CHART_DIR) >/dev/null; \
	else \
		$(GO) test ./charts/... -count=1 -run 'TestChart'; \
	fi

.PHONY: docker-build
docker-build: ## Build the image $(IMG) from the Dockerfile (docker, or buildah where no Docker engine runs).
ifeq ($(CONTAINER_TOOL),buildah)
	IMG=$(IMG) hack/build-image.sh image
else
	$(CONTAINER_TOOL) build -t $(IMG) \
		--build-arg VERSION=$$(git describe --tags --always --dirty 2>/dev/null) \
		--build-arg REVISION=$$(git rev-parse HEAD 2>/dev/null)$$(git diff --quiet HEAD 2>/dev/null || echo -dirty) .
endif

.PHONY: docker-push
docker-push: ## Push the image $(IMG).
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: install
install: manifests ## Install the CRD into the cluster of the current kubeconfig.
	$(KUBECTL) apply --server-side -k config/crd

.PHONY: uninstall
uninstall: ## Remove the CRD (and every RepotEvaluation) from the cluster.
	$(KUBECTL) delete --ignore-not-found -k config/crd

.PHONY: deploy
deploy: manifests ## Deploy the operator with image $(IMG) to the cluster of the current kubeconfig.
	$(KUBECTL) kustomize config/default | sed 's|repot-operator:dev|$(IMG)|g' | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove the operator from the cluster.
	$(KUBECTL) kustomize config/default | $(KUBECTL) delete --ignore-not-found -f -

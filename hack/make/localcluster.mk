# Local cluster, demo and end-to-end tests (hack/localcluster, hack/e2e).
# Included by the top-level Makefile. Nothing here needs Docker, kind or a
# GPU; the local cluster's real node needs root on Linux (without it the
# e2e specs skip and say so, and `make demo` needs KUBECONFIG=). The demo
# and the e2e specs run the real kubectl and helm, built into bin/.

LOCALCLUSTER_STATE ?= bin/localcluster-state
E2E_STATE ?= bin/e2e-state
E2E_TIMEOUT ?= 45m
E2E_FLAGS ?=

.PHONY: demo e2e localcluster-bins realnode-bins localcluster-up localcluster-down

# What the demo and the e2e tests run on the host: the control plane (built
# once per Kubernetes version; 20+ minutes cold on two cores, cached in bin/),
# kubectl and helm (built once per version from the module proxy; what the
# demo, the e2e specs and the docs run), the repot binary (the report, the
# e2e tests' reference runs) and the local cluster.
localcluster-bins: ## Build the control plane, kubectl and helm (cached), bin/repot and bin/localcluster.
	@hack/build-cluster-bins.sh control-plane tools
	go build -o bin/repot .
	go build -o bin/localcluster ./hack/localcluster

# Start the local cluster, install the operator, apply the simulated samples
# of config/samples/demo.yaml, show progress, print `kubectl get reval` and
# the status tables, write the HTML report, stop everything. Everything runs
# on the local cluster's real node (root on Linux; the Debian packages it
# needs are installed when missing): the image built from the Dockerfile,
# the operator installed from the chart as a Deployment, servers and runners
# as containers under containerd. Certificates are cached in
# $(LOCALCLUSTER_STATE), so a second run starts in seconds.
# `make demo KUBECONFIG=PATH IMG=REF` (KUBECONFIG on make's command line, not
# from the environment) runs it on that cluster instead: kind, minikube or
# a real one, which must be able to pull IMG.
demo: localcluster-bins ## Run the simulated sample evaluation end to end on a local cluster (a real node: root on Linux; no Docker or GPU).
	@if [ "$(origin KUBECONFIG)" = "command line" ]; then \
		bin/localcluster demo --dir $(LOCALCLUSTER_STATE) --kubeconfig "$(KUBECONFIG)" --node-image "$(IMG)"; \
	elif hack/install-node-packages.sh && bin/localcluster real-node-check; then \
		$(MAKE) --no-print-directory realnode-bins && bin/localcluster demo --dir $(LOCALCLUSTER_STATE); \
	else echo "make demo: the local cluster's real node cannot run here (see above); run it as root on Linux, or on an existing cluster: make demo KUBECONFIG=PATH IMG=REF" >&2; exit 1; fi

# What the real node runs (localcluster up): the kubelet, kube-proxy, CoreDNS
# and the NetworkPolicy enforcer kube-network-policies (built once, in the
# control plane's module: hack/build-cluster-bins.sh), the artifact store
# versitygw (built once, in its own module), the pause binary of its sandbox
# image, and the project's image built from the Dockerfile. The image needs
# root and buildah; without them the real-node specs skip.
realnode-bins: ## Build the kubelet, kube-proxy, CoreDNS, kube-network-policies and versitygw (cached), bin/pause and, as root with buildah, the project image.
	@hack/build-cluster-bins.sh node s3
	CGO_ENABLED=0 go build -o bin/pause ./hack/localcluster/pause
	@if [ "$$(id -u)" = 0 ] && command -v buildah >/dev/null 2>&1; then \
		IMG=$(IMG) hack/build-image.sh image; \
	else echo "realnode-bins: not root or no buildah: the image is not built and the real-node e2e specs will skip"; fi

# End-to-end tests on the same local cluster (Ginkgo, build tag e2e).
# E2E_FLAGS=-ginkgo.label-filter=... picks suites (labels: derail, kueue,
# helm, paper, realnode, recreate, schedule, tenant, artifacts, localstore). E2E_KUEUE=no leaves out Kueue: it is not
# built and its suite (label kueue) does not run; CI runs the rest so while
# Kueue still builds (a later label filter in E2E_FLAGS replaces this one).
E2E_KUEUE ?= yes
e2e: localcluster-bins realnode-bins $(if $(filter no,$(E2E_KUEUE)),,kueue-bin) ## End-to-end tests on the local cluster (with the real Kueue manager for the admission tests, and a real node).
	REPOT_E2E_BIN=$(CURDIR)/bin REPOT_E2E_STATE=$(CURDIR)/$(E2E_STATE) REPOT_E2E_ROOT=$(CURDIR) \
		go test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -v ./hack/e2e/ \
		$(if $(filter no,$(E2E_KUEUE)),-ginkgo.label-filter='!kueue') $(E2E_FLAGS)

# A cluster to explore by hand: `make localcluster-up` (foreground; Ctrl-C
# stops it), then in another shell `eval $$(bin/localcluster env)`.
localcluster-up: localcluster-bins realnode-bins ## Run the local cluster (control plane and a real node; root) in the foreground (Ctrl-C stops it).
	bin/localcluster up --dir $(LOCALCLUSTER_STATE)

localcluster-down: ## Stop a local cluster started with localcluster-up.
	bin/localcluster down --dir $(LOCALCLUSTER_STATE)

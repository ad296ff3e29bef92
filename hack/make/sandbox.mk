# The sandbox's adversarial catalogue in the three settings CI checks (see
# hack/sandbox-catalogue.sh and docs/sandbox.md). Included by the Makefile.

.PHONY: sandbox-catalogue
sandbox-catalogue: ## Run the sandbox catalogue as root with namespaces, with --isolation none, and with --landlock off as a non-root user.
	hack/sandbox-catalogue.sh

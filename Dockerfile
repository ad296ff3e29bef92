# syntax=docker/dockerfile:1
# The one repot image: the operator (repot manager), the runner (repot run),
# the simulated model server, the readiness and ledger sidecars.

# --- build ------------------------------------------------------------------
FROM golang:1.26-bookworm AS build
WORKDIR /src
# GOCACHE and GOMODCACHE: empty, the cache mounts below. hack/build-image.sh
# mounts the host's Go caches (buildah --volume) and points these at them, so
# that this build reuses the modules the host downloaded and the packages it
# compiled with the same toolchain and flags (make builds with -trimpath, as
# here) instead of compiling every dependency again.
ARG GOCACHE=""
ARG GOMODCACHE=""
# Modules first, so source edits do not invalidate the download layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    GOMODCACHE=${GOMODCACHE:-/go/pkg/mod} go mod download
COPY . .
# cgo stays on: go-nvml binds libnvidia-ml through dlopen (found at run time
# on GPU nodes only; everything else works without it). VERSION and REVISION
# (`make docker-build` passes git's) are what runners record as their build
# in status.models[].provenance; the context has no .git to stamp them from.
ARG VERSION=""
ARG REVISION=""
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOCACHE=${GOCACHE:-/root/.cache/go-build} GOMODCACHE=${GOMODCACHE:-/go/pkg/mod} \
    CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" \
    go build -trimpath -ldflags "-s -w -X repot.dev/repot-operator/contract/buildinfo.linkedVersion=${VERSION} -X repot.dev/repot-operator/contract/buildinfo.linkedRevision=${REVISION}" -o /out/repot .
# The operator copies this binary into vLLM containers (Ubuntu 22.04 and 24.04
# bases, glibc 2.35 and 2.39) to run `repot gpu-telemetry --exec`. cgo links it
# against the build image's glibc, so fail the build if it needs a newer
# symbol version than 2.35 (it needs GLIBC_2.34 when built on bookworm).
RUN need=$(objdump -T /out/repot | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1) \
 && echo "repot needs $need" \
 && [ "$(printf '%s\nGLIBC_2.35\n' "$need" | sort -V | tail -1)" = GLIBC_2.35 ]

# --- runtime ----------------------------------------------------------------
# python3 runs the models' programs in the sandbox (each in its own process).
# Debian's own python3 (3.11 on bookworm), not a python:* image: the sandbox's
# defence depends on the interpreter's internals (frames, AST shapes, syntax),
# so the image ships the Python minor version its tests and the escape
# catalogue run on (`make sandbox-catalogue` reports the version it used).
# python3, not python3-minimal: the sandbox's zygote needs resource, socket
# and ctypes, which python3-minimal leaves out (`make image-test` runs the
# catalogue in this image and failed on it).
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -c 'import sys, resource, socket, ctypes; assert sys.version_info[:2] == (3, 11), sys.version' \
 && groupadd --system --gid 65532 repot \
 && useradd --system --uid 65532 --gid repot --home-dir /home/repot --create-home --shell /usr/sbin/nologin repot
COPY --from=build /out/repot /usr/local/bin/repot
USER 65532:65532
WORKDIR /home/repot
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
ENTRYPOINT ["/usr/local/bin/repot"]
CMD ["--help"]

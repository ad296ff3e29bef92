# syntax=docker/dockerfile:1
# The one repot image: the operator (repot manager), the runner (repot run),
# the simulated model server, the readiness and ledger sidecars.

# --- build ------------------------------------------------------------------
FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so source edits do not invalidate the download layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# cgo stays on: go-nvml binds libnvidia-ml through dlopen (found at run time
# on GPU nodes only; everything else works without it).
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" \
    go build -trimpath -ldflags "-s -w" -o /out/repot .

# --- runtime ----------------------------------------------------------------
# python3 runs the models' programs in the sandbox (each in its own process).
FROM python:3.12-slim-bookworm
RUN groupadd --system --gid 65532 repot \
 && useradd --system --uid 65532 --gid repot --home-dir /home/repot --create-home --shell /usr/sbin/nologin repot \
 && ln -sf /usr/local/bin/python3 /usr/bin/python3
COPY --from=build /out/repot /usr/local/bin/repot
USER 65532:65532
WORKDIR /home/repot
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
ENTRYPOINT ["/usr/local/bin/repot"]
CMD ["--help"]

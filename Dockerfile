# syntax=docker/dockerfile:1
# The healthagents binary in a static, non-root image (docs/deploy.md).
#
#   docker build -t healthagents .
#
# Stage 1 builds a static binary (CGO_ENABLED=0: SQLite is modernc's pure-Go
# port, so nothing links libc); stage 2 is distroless "static" (CA
# certificates, tzdata, /etc/passwd with nonroot, no shell, no package
# manager), running as uid 65532.

FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/healthagents ./cmd/healthagents
# DATA_DIR exists and belongs to nonroot, mode 0700, before the final stage
# copies it (the service would tighten a wider mode anyway); zkp/ too, so a
# named volume mounted there starts owned by nonroot.
RUN install -d -m 0700 -o 65532 -g 65532 /out/data /out/data/zkp

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/healthagents /usr/local/bin/healthagents
COPY --from=build --chown=65532:65532 /out/data /var/lib/healthagents
ENV DATA_DIR=/var/lib/healthagents HOST=0.0.0.0 PORT=8000
USER 65532:65532
EXPOSE 8000
VOLUME ["/var/lib/healthagents"]
ENTRYPOINT ["/usr/local/bin/healthagents"]
CMD ["serve"]

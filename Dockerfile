# Build: make image   (docker build with the version stamps as build arguments), or
#        docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) \
#          --build-arg BRANCH=main -t workflow-exporter .
# Run:   docker run -p 7840:7840 -v $PWD/config.yml:/etc/workflow-exporter/config.yml \
#          -e ORDERS_DATABASE_URL=postgres://... workflow-exporter
# The workload simulator (cmd/workflow-sim; deploy/compose runs it):
#        docker build --target workflow-sim -t workflow-sim .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The stamps of `make release` (scripts/release.sh): the build context has no
# .git, so revision and branch come in as arguments; unset ones get the
# script's defaults (the VERSION file, "unknown", user@host, now).
ARG VERSION
ARG REVISION
ARG BRANCH
ARG BUILD_USER
ARG BUILD_DATE
RUN bash scripts/release.sh build /out/workflow-exporter && /out/workflow-exporter --version

FROM build AS build-sim
RUN CGO_ENABLED=0 go build -o /out/workflow-sim ./cmd/workflow-sim

FROM gcr.io/distroless/static-debian12:nonroot AS workflow-sim
COPY --from=build-sim /out/workflow-sim /usr/local/bin/workflow-sim
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/workflow-sim"]

# The exporter: the last stage, what a plain docker build builds.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION
ARG REVISION
LABEL org.opencontainers.image.title="workflow-exporter" \
      org.opencontainers.image.description="Prometheus exporter for Camunda 7 external tasks and worker idempotency, inbox, outbox and processed-job tables" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/workflow-exporter/workflow-exporter" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/workflow-exporter /usr/local/bin/workflow-exporter
EXPOSE 7840
# Numeric, so Kubernetes can verify runAsNonRoot (a user name it cannot check: CreateContainerConfigError).
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/workflow-exporter"]
CMD ["--config.file=/etc/workflow-exporter/config.yml"]

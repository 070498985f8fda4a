# Build: docker build -t workflow-exporter .
# Run:   docker run -p 7840:7840 -v $PWD/config.yml:/etc/workflow-exporter/config.yml \
#          -e ORDERS_DATABASE_URL=postgres://... workflow-exporter
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/prometheus/common/version.Version=${VERSION} -X github.com/prometheus/common/version.Revision=${REVISION}" \
      -o /out/workflow-exporter ./cmd/exporter

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/workflow-exporter /usr/local/bin/workflow-exporter
EXPOSE 7840
# Numeric, so Kubernetes can verify runAsNonRoot (a user name it cannot check: CreateContainerConfigError).
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/workflow-exporter"]
CMD ["--config.file=/etc/workflow-exporter/config.yml"]

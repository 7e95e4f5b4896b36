# Capstan, built once and run as an unprivileged user.
#   docker build -t capstan .        (or `docker compose up`, which builds it)
# The build stage compiles a static binary; the run stage is a slim Debian
# with bash (the shell runner's interpreter) and CA certificates.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/capstan ./cmd/capstan

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /var/lib/capstan --create-home capstan
COPY --from=build /out/capstan /usr/local/bin/capstan
USER capstan
WORKDIR /var/lib/capstan
EXPOSE 8080
ENTRYPOINT ["capstan"]
# A container listens on 0.0.0.0, so it needs a tokens file (dev mode
# listens on loopback only): mount one at /etc/capstan/tokens.yaml.
CMD ["serve", "--listen", "0.0.0.0:8080", "--data-dir", "/var/lib/capstan", "--tokens", "/etc/capstan/tokens.yaml"]

# Capstan, built once and run as an unprivileged user.
#   docker build -t capstan .        (or `docker compose up`, which builds it)
# The build stage compiles a static binary; the run stage is a slim Debian
# with bash (the shell runner's interpreter), util-linux (mount, setpriv:
# the job sandbox) and CA certificates.
#
# Jobs are isolated from the server (docs/SANDBOX.md): as a user that is
# not root, each runs in a user namespace of its own, where the data
# directory, the tokens and the secret store are hidden. Docker's default
# seccomp and AppArmor profiles forbid making namespaces, and then shell
# jobs and command probes are refused (never run unisolated) — so run it
# with every capability dropped and those two profiles lifted, as
# docker-compose.yml does:
#   docker run --cap-drop ALL --security-opt no-new-privileges \
#     --security-opt seccomp=unconfined --security-opt apparmor=unconfined capstan

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/capstan ./cmd/capstan

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates util-linux mount \
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

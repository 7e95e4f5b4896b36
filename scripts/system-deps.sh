#!/usr/bin/env bash
# Installs what the tests need from the system when it is missing, and
# nothing when it is all there: Debian's Chromium for the console's
# browser tests, util-linux's mount and setpriv for the job sandbox,
# PostgreSQL (the test hosts' image: postgres.install starts it on a host;
# no cluster of its own is made on this machine),
# iproute2 for the test hosts' network namespaces, OpenSSH's server and
# client for the test hosts themselves, ansible for its runner, and
# kubectl (the Kubernetes benchmarks compare the runner with it). Last, it
# builds the test cluster's binary when it is not cached
# (scripts/cluster.sh build: a one-time cost, about 8 minutes on 2 cores). `make test` and .ci/run call it,
# so a fresh machine needs no other step. Set CHROMIUM to use a browser of
# your own.
set -euo pipefail

missing=()
if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  missing+=(chromium)
fi
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
command -v mount >/dev/null 2>&1 || missing+=(mount)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
command -v ansible-playbook >/dev/null 2>&1 || missing+=(ansible)
command -v kubectl >/dev/null 2>&1 || missing+=(kubectl)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)

here=$(cd "$(dirname "$0")" && pwd)
if [ ${#missing[@]} -eq 0 ]; then
  "$here/cluster.sh" build >/dev/null
  exit 0
fi
echo "system-deps: installing ${missing[*]}" >&2
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: ${missing[*]} missing and no apt-get to install them; install them by hand" >&2
  exit 1
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "system-deps: ${missing[*]} missing; installing needs root (or sudo)" >&2
    exit 1
  fi
  SUDO=(sudo)
fi
if [[ " ${missing[*]} " == *" postgresql "* ]] && [ ! -e /etc/postgresql-common/createcluster.conf ]; then
  # The package would make and start a cluster of its own here; the
  # tests make theirs on test hosts.
  "${SUDO[@]}" mkdir -p /etc/postgresql-common
  echo "create_main_cluster = false" | "${SUDO[@]}" tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
"$here/cluster.sh" build >/dev/null

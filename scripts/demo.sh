#!/usr/bin/env bash
# make demo: the seed's story. As root, for real on the project's own test
# cluster and a test host (scripts/demo-tempo-kube.sh, under a cluster
# withcluster starts, or CAPSTAN_KUBECONFIG's). Without root — test hosts
# are network namespaces — it says why on its first line, and tells the
# simulated story against a running `make run` (scripts/demo-sim.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
  echo "SIMULATED: not root, so no test host can be made (a network namespace): this is the simulated story against make run; as root, make demo runs it for real"
  exec "$here/demo-sim.sh"
fi
cd "$here/.."
if [ -n "${CAPSTAN_KUBECONFIG:-}" ]; then
  exec "$here/demo-tempo-kube.sh"
fi
exec ${GO:-go} run ./internal/withcluster -- "$here/demo-tempo-kube.sh"

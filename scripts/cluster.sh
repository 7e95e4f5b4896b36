#!/usr/bin/env bash
# The test cluster: a real Kubernetes control plane on loopback (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler) and kwok
# playing the kubelets (docs/KUBERNETES.md).
#
#   scripts/cluster.sh build     build the cluster's one binary once and print its path
#   scripts/cluster.sh start     start a cluster for local work (make cluster): prints its
#                                kubeconfig and runs until Ctrl-C
#
# The binary (tools/kubecluster: the control plane from k8s.io/kubernetes
# v1.37.2 and kwok v0.8.0, linked together so that their shared packages
# compile once) is cached in $CAPSTAN_CACHE (default ~/.cache/capstan)
# under the hash of its sources and go.sum: a warm machine never builds
# it again, and a change to its pins builds a new one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
src="$root/tools/kubecluster"

build() {
  local hash cache bin lock start
  hash=$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" "$0" | sha256sum | cut -c1-16)
  cache=${CAPSTAN_CACHE:-$HOME/.cache/capstan}/kube
  bin="$cache/capstan-kube-$hash"
  if [ -x "$bin" ]; then
    echo "$bin"
    return
  fi
  mkdir -p "$cache"
  lock="$cache/build.lock"
  exec 9>"$lock"
  flock 9 # one build at a time, across test processes
  if [ ! -x "$bin" ]; then
    echo "cluster.sh: the test cluster's binary is not cached yet: building it once from k8s.io/kubernetes v1.37.2 and sigs.k8s.io/kwok v0.8.0 (about 10 minutes on 2 cores) into $cache" >&2
    start=$(date +%s)
    # The components report the release they are built from (helm and
    # kubectl read it), as a release build stamps it.
    v=k8s.io/component-base/version
    (cd "$src" && go build -trimpath -o "$bin.tmp" \
      -ldflags "-s -w -X $v.gitVersion=v1.37.2 -X $v.gitMajor=1 -X $v.gitMinor=37 -X $v.gitTreeState=clean" .)
    mv "$bin.tmp" "$bin"
    echo "cluster.sh: built in $(( $(date +%s) - start )) s" >&2
  fi
  exec 9>&-
  echo "$bin"
}

case "${1:-}" in
  build) build ;;
  start)
    build >/dev/null
    cd "$root" && exec go run ./internal/withcluster -hold
    ;;
  *)
    echo "usage: scripts/cluster.sh build|start" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Every benchmark once at make test's small size (so none rots unseen),
# three packages at once. `go test -bench ./...` runs its packages one
# after another, so each package with a benchmark gets a `go test` of its
# own, the slowest first. Each writes its events to a file of its own
# (concurrent writers to one pipe could tear a long line), and testprint
# shows them all once every package has ended.
#
#   scripts/bench-pass.sh        (make test-suite runs it; bin/testprint must be built)
set -uo pipefail
cd "$(dirname "$0")/.."
export CAPSTAN_BENCH_NODES=${CAPSTAN_BENCH_NODES:-50} CAPSTAN_BENCH_RESOURCES=${CAPSTAN_BENCH_RESOURCES:-50}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The packages with a benchmark, cmd/capstan (the browser's) first.
mapfile -t pkgs < <(grep -rl --include='*_test.go' '^func Benchmark' . | grep -v node_modules | xargs -n1 dirname | sort -u |
  awk '$0 == "./cmd/capstan" { print; next } { rest[++n] = $0 } END { for (i = 1; i <= n; i++) print rest[i] }')
printf '%s\n' "${pkgs[@]}" | xargs -P 3 -I{} bash -c \
  'go test -json -count=1 -run "^\$" -bench . -benchtime 1x -timeout 20m "$1" > "$2/$(tr ./ __ <<<"$1").json" 2>&1' _ {} "$out"
status=$?
cat "$out"/*.json | bin/testprint || status=1
exit "$status"

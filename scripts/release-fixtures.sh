#!/usr/bin/env bash
# Writes the upgrade fixtures of a release with that release's own
# binary: testdata/upgrade/TAG/{embedded.tar.gz,embedded.json,
# neo4j.jsonl.gz,neo4j.json}. The upgrade test (cmd/capstan) opens
# every release's fixtures with the current build.
#
#   scripts/release-fixtures.sh v0.1.0
set -euo pipefail
tag=${1:?usage: scripts/release-fixtures.sh TAG}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add --detach "$work/src" "$tag" >/dev/null
(cd "$work/src" && go build -o "$work/capstan-$tag" ./cmd/capstan)
cd "$root"
go run ./internal/upgradefixtures -binary "$work/capstan-$tag" -tag "$tag" -dir testdata/upgrade
ls -l "testdata/upgrade/$tag"

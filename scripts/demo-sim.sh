#!/usr/bin/env bash
# The seed's example, SIMULATED, end to end against a running `make run`:
# intent -> plan -> operation -> the MinIO sub-operation's prod gate (approved
# by the second dev approver) -> the Tempo rollout gate -> verified result.
# Demo jobs use the `sim` runner (scripted outcomes), so nothing is installed.
#
#   make run     # in one terminal
#   make demo-sim  # in another: the same CAPSTAN_LISTEN / CAPSTAN_DATA_DIR
#                # as make run, or CAPSTAN_URL and CAPSTAN_DEV_TOKEN
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# What this story proves is said before anything else: the bundled tempo,
# minio and vault scenarios it runs still simulate their steps (runner
# sim, probes sim), so every SIMULATED line below checked nothing real.
echo "SIMULATED: this story pins the simulated versions of the tempo and minio scenarios (tempo.install@1.3.0, minio.install@1.0.0) and vault's, whose steps and probes simulate: nothing is installed, and evidence marked SIMULATED checked nothing real. The real story is make demo as root (docs/KUBERNETES.md)."
demo_target
sre="$admin-sre"

intent=$(gql "$admin" 'mutation { createIntent(input: {action: "install", targetResourceType: "tempo.instance", scenario: "tempo.install@1.3.0",
  desiredResult: {name: "prod-tempo", version: "2.x"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }' | field '["createIntent"]["id"]')
echo "intent  $intent"
plan=$(gql "$admin" 'mutation($id: ID!) { planIntent(input: {intent: $id}) { id status target { effect description } summary { bindings } } }' "{\"id\": \"$intent\"}")
echo "plan    $(echo "$plan" | field '["planIntent"]["status"]')"
# What the operation does to prod-tempo: a second `make demo` finds it
# installed, and says that this install runs again on it in place.
echo "target  $(echo "$plan" | field '["planIntent"]["target"]["effect"]'): $(echo "$plan" | field '["planIntent"]["target"]["description"]')"
echo "$plan" | field '["planIntent"]["summary"]["bindings"]' | tr -d "[]'" | tr ',' '\n' | sed 's/^ */        /'
planID=$(echo "$plan" | field '["planIntent"]["id"]')
op=$(gql "$admin" 'mutation($p: ID!, $k: String) { startOperation(input: {plan: $p, idempotencyKey: $k}) { id } }' "{\"p\": \"$planID\", \"k\": \"demo-$planID\"}" | field '["startOperation"]["id"]')
echo "operation $op started"

approve() { # operation node
  gql "$sre" 'mutation($o: ID!, $n: String!) { decideGate(input: {operation: $o, node: $n, approve: true, comment: "demo"}) { status } }' \
    "{\"o\": \"$1\", \"n\": \"$2\"}" >/dev/null && echo "approved $2 (as dev-sre)"
}
for _ in $(seq 1 300); do
  state=$(gql "$admin" 'query($id: ID!) { operation(id: $id) { status gates { node status } } operations(filter: {status: WAITING}) { edges { node { id gates { node status } } } } }' "{\"id\": \"$op\"}")
  status=$(echo "$state" | field '["operation"]["status"]')
  case "$status" in SUCCEEDED|FAILED|CANCELLED) break ;; esac
  for pair in $(echo "$state" | python3 -c '
import json,sys
d=json.load(sys.stdin)
for e in d["operations"]["edges"]:
    for g in e["node"]["gates"]:
        if g["status"]=="WAITING": print(e["node"]["id"]+"|"+g["node"])'); do
    approve "${pair%%|*}" "${pair##*|}"
  done
  sleep 0.5
done
echo "operation $status"
gql "$admin" 'query($id: ID!) { operation(id: $id) { evidence { producedBy item result simulated } timeline(first: 200) { edges { node { sequence type } } } } }' "{\"id\": \"$op\"}" |
  python3 -c '
import json,sys
d=json.load(sys.stdin)["operation"]
sim = sum(1 for e in d["evidence"] if e["simulated"])
print("evidence: %d items, %d of them SIMULATED (nothing real was checked)" % (len(d["evidence"]), sim))
[print("   ", e["producedBy"], e["item"], "SIMULATED" if e["simulated"] else e["result"]) for e in d["evidence"]]
print("timeline:", " ".join(str(e["node"]["sequence"])+":"+e["node"]["type"] for e in d["timeline"]["edges"]))'

#!/usr/bin/env bash
# The seed's §8 story against a running `make run`: a kubernetes cluster
# create on prod-worker-3, a host without registry access. init-control-plane
# fails on registry access; the rule analyzer (ai-agent:rules) reports the
# missing capability and proposes a PlanPatch (insert configure-registry-mirror
# after install-containerd, retry init-control-plane); in prod an
# analyzer's patch needs two people, neither its proposer (nor, as it
# touches a gate, its starter): the two dev sres approve it; revision 2
# applies and the operation succeeds.
# Jobs use the sim runner; the failure, analysis, patch, approval and
# continuation are the product's real paths.
#
#   make run          # in one terminal
#   make demo-patch-sim   # in another: the same CAPSTAN_LISTEN / CAPSTAN_DATA_DIR
#                     # as make run, or CAPSTAN_URL and CAPSTAN_DEV_TOKEN
set -euo pipefail
echo "SIMULATED: the cluster create's jobs run on the sim runner (kubeadm needs a kubelet and a container runtime); make demo-patch runs the story on a real Kubernetes API"
. "$(dirname "$0")/lib.sh"
demo_target
sre="$admin-sre" sre2="$admin-sre2"

intent=$(gql "$admin" 'mutation { createIntent(input: {action: "create", targetResourceType: "kubernetes.cluster", mode: ADVANCED,
  desiredResult: {name: "demo-k8s"}, constraints: {environment: "prod"},
  providers: [{requirement: "hosts", provider: "compute.node/prod-worker-3"}]}) { id } }' | field '["createIntent"]["id"]')
plan=$(gql "$admin" 'mutation($id: ID!) { planIntent(input: {intent: $id}) { id status scenarioRef } }' "{\"id\": \"$intent\"}")
planID=$(echo "$plan" | field '["planIntent"]["id"]')
echo "plan      $(echo "$plan" | field '["planIntent"]["scenarioRef"]') $(echo "$plan" | field '["planIntent"]["status"]')"
op=$(gql "$admin" 'mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }' "{\"p\": \"$planID\"}" | field '["startOperation"]["id"]')
echo "operation $op started"

state() {
  gql "$admin" 'query($id: ID!) { operation(id: $id) { status planRevision currentNodes progress { currentPhase }
    gates { node status } patches { id status digest author reason changes { op node template }
      analysis { analyzer diagnosis missingCapabilities } } } }' "{\"id\": \"$op\"}"
}
last="" approved=""
for _ in $(seq 1 600); do
  s=$(state)
  status=$(echo "$s" | field '["operation"]["status"]')
  now="$status $(echo "$s" | field '["operation"]["progress"]["currentPhase"]') $(echo "$s" | field '["operation"]["currentNodes"]')"
  [ "$now" != "$last" ] && echo "          $now" && last=$now
  case "$status" in SUCCEEDED|FAILED|CANCELLED|ROLLED_BACK) break ;; esac
  proposed=$(echo "$s" | python3 -c '
import json,sys
for p in json.load(sys.stdin)["operation"]["patches"]:
    if p["status"] == "PROPOSED": print(p["id"] + " " + p["digest"])' | head -1)
  if [ -n "$proposed" ] && [ -z "$approved" ]; then
    echo "$s" | python3 -c '
import json,os,sys
p=[p for p in json.load(sys.stdin)["operation"]["patches"] if p["status"]=="PROPOSED"][0]
a=p["analysis"] or {}
print("analysis  by", p["author"] + ":", a.get("diagnosis"))
want = os.environ.get("CAPSTAN_EXPECT_ANALYZER")
if want and p["author"] != want: sys.exit("the patch is by " + p["author"] + ", not " + want + ": is the server running with --analyzer openai?")
print("missing  ", ", ".join(a.get("missingCapabilities") or []))
for c in p["changes"]: print("proposes ", c["op"], c["node"], c["template"] or "")'
    for who in sre sre2; do
      decided=$(gql "${!who}" 'mutation($p: ID!, $d: String!) { decidePlanPatch(input: {patch: $p, approve: true, digest: $d, comment: "demo"}) { status appliedRevision outstanding { rule approvals } } }' \
        "{\"p\": \"${proposed%% *}\", \"d\": \"${proposed##* }\"}")
      echo "$decided" | WHO="dev-$who" python3 -c '
import json,os,sys; d=json.load(sys.stdin)["decidePlanPatch"]
still = ", ".join("%s needs %d more" % (o["rule"], o["approvals"]) for o in d["outstanding"] or [])
print("patch     approved by " + os.environ["WHO"] + ":", d["status"], "revision", d["appliedRevision"], ("(" + still + ")") if still else "")'
      [ "$(echo "$decided" | field '["decidePlanPatch"]["status"]')" = PROPOSED ] || break
    done
    approved=yes
  fi
  for g in $(echo "$s" | python3 -c '
import json,sys
for g in json.load(sys.stdin)["operation"]["gates"]:
    if g["status"] == "WAITING": print(g["node"])'); do
    gql "$sre" 'mutation($o: ID!, $n: String!) { decideGate(input: {operation: $o, node: $n, approve: true, comment: "demo"}) { status } }' \
      "{\"o\": \"$op\", \"n\": \"$g\"}" >/dev/null && echo "gate      $g approved by dev-sre"
  done
  sleep 0.5
done
echo "operation $status on revision $(state | field '["operation"]["planRevision"]')"
gql "$admin" 'query($p: ID!) { planDiff(plan: $p, from: 1, to: 2) { nodesAdded { key template } edgesAdded { from to } edgesRemoved { from to } } }' "{\"p\": \"$planID\"}" |
  python3 -c '
import json,sys
d=json.load(sys.stdin)["planDiff"]
print("planDiff(1, 2):")
for n in d["nodesAdded"]: print("   + node", n["key"], "from", n["template"])
for e in d["edgesAdded"]: print("   + edge", e["from"], "->", e["to"])
for e in d["edgesRemoved"]: print("   - edge", e["from"], "->", e["to"])'
gql "$admin" 'query($id: ID!) { operation(id: $id) { timeline(first: 500) { edges { node { sequence type } } } } }' "{\"id\": \"$op\"}" |
  python3 -c '
import json,sys
d=json.load(sys.stdin)["operation"]
print("timeline:", " ".join(str(e["node"]["sequence"])+":"+e["node"]["type"] for e in d["timeline"]["edges"]))'
[ "$status" = SUCCEEDED ]

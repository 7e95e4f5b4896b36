#!/usr/bin/env bash
# The seed's §8 story on the project's test cluster (CAPSTAN_KUBECONFIG;
# make demo-patch starts one):
#   1. the cluster is registered: Capstan's ServiceAccount gets the grant
#      the packs declare (capstan cluster rbac), its token goes into the
#      secret store, the cluster into the catalog with its pinned CA;
#   2. an app of 3 replicas is rolled out in prod, one pod per node; kwok
#      puts the pod scheduled on worker-3 into ErrImagePull (a node that
#      cannot reach its registry);
#   3. the rollout fails at its progress deadline; the step's error and
#      evidence carry each pod's reason and events, read from the cluster;
#      the rule analyzer proposes a PlanPatch: keep the app off worker-3
#      and roll out again;
#   4. two SREs approve it (prod: two people, neither the proposer);
#   5. revision 2 rolls out, and its evidence shows the pods Ready on the
#      other nodes.
# It starts its own server (bin/capstan, or $CAPSTAN_BIN) on a free port
# with a throwaway data directory ($CAPSTAN_SERVE_FLAGS: extra flags).
#
#   make demo-patch
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${CAPSTAN_BIN:-$here/../bin/capstan}
kubeconfig=${CAPSTAN_KUBECONFIG:-}
[ -n "$kubeconfig" ] || { echo "demo-patch: no cluster: run make demo-patch (it starts the test cluster), or set CAPSTAN_KUBECONFIG to one" >&2; exit 1; }
[ -x "$bin" ] || { echo "demo-patch: no $bin: run make build" >&2; exit 1; }
k() { kubectl --kubeconfig "$kubeconfig" "$@"; }

work=$(mktemp -d)
ns=demo-patch-$$-$RANDOM
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

admin="demo-admin-token-0123456789" sre="demo-sre-token-0123456789" sre2="demo-sre2-token-0123456789"
cat > "$work/tokens.yaml" <<TOKENS
tokens:
  - {token: $admin, actor: alice, organization: demo, roles: [admin]}
  - {token: $sre, actor: sam, organization: demo, roles: [sre]}
  - {token: $sre2, actor: kim, organization: demo, roles: [sre]}
TOKENS
. "$here/lib.sh"
serve_throwaway "$work" 127.0.0.1/32 # sets url and server

echo "1. the cluster"
cluster_access "$work" # sets token and api, writes $work/ca.pem
k create namespace "$ns" >/dev/null
gql "$admin" 'mutation($v: String!) { putSecret(input: {name: "prod-kwok-token", value: $v}) { name } }' "$(python3 -c 'import json,sys; print(json.dumps({"v": sys.argv[1]}))' "$token")" >/dev/null
catalog=$(python3 - "$api" "$work/ca.pem" <<'PY'
import json, sys
api, ca = sys.argv[1], open(sys.argv[2]).read()
doc = "organization: demo\nenvironments: [prod]\nclusters:\n  - " + json.dumps({"name": "prod-kwok", "environment": "prod", "health": "healthy",
    "api_server": api, "ca": ca, "credentials": "secret:prod-kwok-token"}) + "\n"
print(json.dumps({"doc": doc}))
PY
)
gql "$admin" 'mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }' "$catalog" >/dev/null
echo "   prod-kwok: $api, nodes: $(k get nodes -o jsonpath='{.items[*].metadata.name}')"

echo "2. roll out web (3 replicas) in prod, namespace $ns"
intent=$(gql "$admin" 'mutation { createIntent(input: {action: "create", targetResourceType: "kubernetes.app", desiredResult: {name: "web"}, constraints: {environment: "prod", cluster: "prod-kwok"}}) { id } }' | field '["createIntent"]["id"]')
plan=$(gql "$admin" 'mutation($id: ID!) { planIntent(input: {intent: $id}) { id version scenarioRef } }' "{\"id\": \"$intent\"}")
planID=$(echo "$plan" | field '["planIntent"]["id"]')
gql "$admin" 'mutation($p: ID!, $v: Int!, $ns: Any!) { editPlan(input: {plan: $p, version: $v, changes: [{op: SET_PARAMETERS, node: "apply-app", parameters: {namespace: $ns, replicas: 3, progress_deadline: 15}}]}) { id } }' \
  "{\"p\": \"$planID\", \"v\": $(echo "$plan" | field '["planIntent"]["version"]'), \"ns\": \"$ns\"}" >/dev/null
op=$(gql "$admin" 'mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }' "{\"p\": \"$planID\"}" | field '["startOperation"]["id"]')
echo "   plan $(echo "$plan" | field '["planIntent"]["scenarioRef"]'), operation $op"

state() {
  gql "$admin" 'query($id: ID!) { operation(id: $id) { status planRevision currentNodes
    nodeRuns { node status error } patches { id status digest author changes { op node parameters }
      analysis { analyzer diagnosis missingCapabilities } } } }' "{\"id\": \"$op\"}"
}
last="" approved="" status=""
for _ in $(seq 1 900); do
  s=$(state)
  status=$(echo "$s" | field '["operation"]["status"]')
  now="$status $(echo "$s" | field '["operation"]["currentNodes"]')"
  [ "$now" != "$last" ] && echo "   $now" && last=$now
  case "$status" in SUCCEEDED|FAILED|CANCELLED|ROLLED_BACK) break ;; esac
  proposed=$(echo "$s" | python3 -c '
import json,sys
for p in json.load(sys.stdin)["operation"]["patches"]:
    if p["status"] == "PROPOSED": print(p["id"] + " " + p["digest"])' | head -1)
  if [ -n "$proposed" ] && [ -z "$approved" ]; then
    echo "3. the rollout failed; the analyzer proposes a patch"
    echo "$s" | python3 -c '
import json,sys
o=json.load(sys.stdin)["operation"]
for r in o["nodeRuns"]:
    if r["error"]: print("   error    ", r["node"] + ":", r["error"])
p=[p for p in o["patches"] if p["status"]=="PROPOSED"][0]
a=p["analysis"] or {}
print("   analysis  by", p["author"] + ":", a.get("diagnosis"))
print("   missing  ", ", ".join(a.get("missingCapabilities") or []))
for c in p["changes"]: print("   proposes ", c["op"], c["node"], json.dumps(c["parameters"]) if c["parameters"] else "")'
    echo "4. two SREs approve it"
    for who in sre sre2; do
      decided=$(gql "${!who}" 'mutation($p: ID!, $d: String!) { decidePlanPatch(input: {patch: $p, approve: true, digest: $d, comment: "keep web off worker-3"}) { status appliedRevision outstanding { rule approvals } } }' \
        "{\"p\": \"${proposed%% *}\", \"d\": \"${proposed##* }\"}")
      echo "$decided" | WHO="$who" python3 -c '
import json,os,sys; d=json.load(sys.stdin)["decidePlanPatch"]
still = ", ".join("%s needs %d more" % (o["rule"], o["approvals"]) for o in d["outstanding"] or [])
print("   approved by " + os.environ["WHO"] + ":", d["status"], "revision", d["appliedRevision"], ("(" + still + ")") if still else "")'
      [ "$(echo "$decided" | field '["decidePlanPatch"]["status"]')" = PROPOSED ] || break
    done
    approved=yes
    echo "5. the patched plan rolls out"
  fi
  sleep 0.5
done
echo "   operation $status on revision $(state | field '["operation"]["planRevision"]')"
[ "$status" = SUCCEEDED ] || exit 1
gql "$admin" 'query($id: ID!) { operation(id: $id) { evidence { item result producedBy source } } }' "{\"id\": \"$op\"}" | python3 -c '
import json,sys
ev=json.load(sys.stdin)["operation"]["evidence"]
for e in ev:
    s=e["source"]
    if e["item"] == "rolled-out" and e["result"] == "PASSED":
        print("   evidence rolled-out PASSED:", s.get("status"), "| pods per node:", ", ".join("%s %d ready" % (n, c["ready"]) for n, c in sorted(s.get("pods", {}).items())), "| uid", s.get("uid"))
    elif e["result"] == "FAILED" and s.get("pods_not_ready"):
        print("   evidence", e["item"], "FAILED:", "; ".join(s["pods_not_ready"]))'
echo "   live: $(k -n "$ns" get pods -o jsonpath='{range .items[*]}{.spec.nodeName}={.status.phase} {end}')"
echo "OK: the pods on worker-3 could not pull; the analyzer's patch, approved by two SREs, rolled web out on the other nodes"

#!/usr/bin/env bash
# The seed's story for real (make demo as root): install Tempo 2.x in prod
# on prod-k8s, where
#   1. prod-k8s is the project's test cluster (CAPSTAN_KUBECONFIG; make
#      demo starts one), registered with its pinned CA and a ServiceAccount
#      token from the secret store; a test host (a network namespace with
#      a real sshd) is a prod machine; the only prod S3 store is shared;
#   2. the plan binds the cluster and, since the shared store fails the
#      dedicated-in-prod policy, creates a dedicated S3 store with a
#      sub-operation (minio.install: an S3 server started on the host over
#      SSH, its keys generated there and kept in the secret store);
#   3. a second person (an SRE) approves the new store and the rollout;
#   4. the traces bucket is made on the new store; the pack's own chart is
#      installed with the store's endpoint and keys;
#   5. the evidence is read from the cluster (the Deployment, the
#      Service's endpoints: uid, resourceVersion) and the S3 server (a
#      PUT, a GET and a DELETE in the bucket).
# kwok plays the kubelets: no Tempo process runs, so no span is sent.
# It starts its own server (bin/capstan, or $CAPSTAN_BIN) on a free port
# with a throwaway data directory ($CAPSTAN_SERVE_FLAGS: extra flags), and
# removes everything it made when it ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${CAPSTAN_BIN:-$here/../bin/capstan}
kubeconfig=${CAPSTAN_KUBECONFIG:-}
[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (the test host is a network namespace)" >&2; exit 1; }
[ -n "$kubeconfig" ] || { echo "demo: no cluster: run make demo (it starts the test cluster), or set CAPSTAN_KUBECONFIG to one" >&2; exit 1; }
[ -x "$bin" ] || { echo "demo: no $bin: run make build" >&2; exit 1; }
command -v versitygw >/dev/null || { echo "demo: no versitygw on PATH: make s3-server puts it in /usr/local/bin, which the test hosts share" >&2; exit 1; }
k() { kubectl --kubeconfig "$kubeconfig" "$@"; }

work=$(mktemp -d /var/tmp/capstan-demo-tempo.XXXXXX) # not /tmp: each host mounts its own there
name=prod-tempo-$(printf '%04x' $((RANDOM % 65536)))
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  k delete namespace "$name" --wait=false >/dev/null 2>&1 || true
  bash "$here/testhosts.sh" down "$work/hosts" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "REAL: Tempo in prod on the test cluster; a dedicated S3 server on a test host; evidence read from both (kwok plays the kubelets: no container runs)"
admin="demo-admin-token-0123456789" sre="demo-sre-token-0123456789"
cat > "$work/tokens.yaml" <<TOKENS
tokens:
  - {token: $admin, actor: alice, organization: demo, roles: [admin]}
  - {token: $sre, actor: sam, organization: demo, roles: [sre]}
TOKENS
. "$here/lib.sh"

echo "1. prod: the cluster, a host, a shared S3 store"
bash "$here/testhosts.sh" up "$work/hosts" 1 > "$work/hosts.txt"
# The catalog holds the real parts only (below), not make run's demo one.
printf 'organization: demo\nenvironments: [prod]\n' > "$work/catalog.yaml"
CAPSTAN_SERVE_FLAGS="--catalog $work/catalog.yaml ${CAPSTAN_SERVE_FLAGS:-}" serve_throwaway "$work" 127.0.0.1/32,10.0.0.0/8 # sets url and server
cluster_access "$work" # sets token and api, writes $work/ca.pem
put_secret() { # name file
  gql "$admin" 'mutation($n: String!, $v: String!) { putSecret(input: {name: $n, value: $v}) { name } }' \
    "$(python3 -c 'import json,sys; print(json.dumps({"n": sys.argv[1], "v": open(sys.argv[2]).read()}))' "$1" "$2")" >/dev/null
}
echo "$token" > "$work/token"
put_secret prod-k8s-token "$work/token"
put_secret prod-hosts-key "$work/hosts/client_ed25519"
catalog=$(python3 - "$api" "$work/ca.pem" "$work/hosts.txt" <<'PY'
import json, sys
api, ca = sys.argv[1], open(sys.argv[2]).read()
host, addr, port, key = open(sys.argv[3]).read().split(None, 3)
row = lambda d: "  - " + json.dumps(d) + "\n"
doc = ("organization: demo\nenvironments: [prod]\nclusters:\n" +
  row({"name": "prod-k8s", "environment": "prod", "region": "eu-central", "health": "healthy", "api_server": api, "ca": ca, "credentials": "secret:prod-k8s-token"}) +
  "compute_nodes:\n" +
  row({"name": "prod-storage-1", "environment": "prod", "region": "eu-central", "os": "debian", "ssh_user": "root", "address": addr, "ssh_port": int(port),
       "ssh_host_key": key.strip(), "ssh_private_key": "secret:prod-hosts-key", "health": "healthy"}) +
  "internal_services:\n" +
  row({"name": "shared-prod-storage", "type": "minio.instance", "environment": "prod", "region": "eu-central", "health": "healthy", "runs_on": "prod-k8s",
       "provides": [{"capability": "object_storage.s3", "attributes": {"encryption": "optional", "access_mode": "shared"}}]}))
print(json.dumps({"doc": doc}))
PY
)
gql "$admin" 'mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }' "$catalog" >/dev/null
echo "   prod-k8s: $api (nodes $(k get nodes -o jsonpath='{.items[*].metadata.name}'))"
echo "   prod-storage-1: $(cut -d' ' -f2,3 "$work/hosts.txt" | tr ' ' ':') over SSH"

echo "2. install Tempo 2.x in prod on prod-k8s ($name)"
intent=$(gql "$admin" 'mutation($n: String!) { createIntent(input: {action: "install", targetResourceType: "tempo.instance",
  desiredResult: {name: $n, version: "2.x"}, constraints: {environment: "prod", cluster: "prod-k8s"}}) { id } }' "{\"n\": \"$name\"}" | field '["createIntent"]["id"]')
plan=$(gql "$admin" 'mutation($id: ID!) { planIntent(input: {intent: $id}) { id version status scenarioRef problems summary { bindings } } }' "{\"id\": \"$intent\"}")
echo "   plan $(echo "$plan" | field '["planIntent"]["scenarioRef"]'): $(echo "$plan" | field '["planIntent"]["status"]') $(echo "$plan" | field '["planIntent"]["problems"]')"
echo "$plan" | field '["planIntent"]["summary"]["bindings"]' | tr -d "[]'" | tr ',' '\n' | sed 's/^ */   /'
planID=$(echo "$plan" | field '["planIntent"]["id"]')
# kwok's worker-3 cannot pull (the §8 story, make demo-patch): keep Tempo off it.
gql "$admin" 'mutation($p: ID!, $v: Int!) { editPlan(input: {plan: $p, version: $v, changes: [{op: SET_PARAMETERS, node: "helm-install", parameters: {avoid_node: "worker-3"}}]}) { id } }' \
  "{\"p\": \"$planID\", \"v\": $(echo "$plan" | field '["planIntent"]["version"]')}" >/dev/null
op=$(gql "$admin" 'mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }' "{\"p\": \"$planID\"}" | field '["startOperation"]["id"]')
echo "   operation $op started by alice"

echo "3. sam (SRE) approves what waits for a second person"
status="" last=""
for _ in $(seq 1 900); do
  state=$(gql "$admin" 'query($id: ID!) { operation(id: $id) { status currentNodes nodeRuns { node error } } operations(filter: {status: WAITING}) { edges { node { id scenarioRef: plan { scenarioRef } gates { node status } } } } }' "{\"id\": \"$op\"}")
  status=$(echo "$state" | field '["operation"]["status"]')
  now="$status $(echo "$state" | field '["operation"]["currentNodes"]')"
  [ "$now" != "$last" ] && echo "   $now" && last=$now
  case "$status" in SUCCEEDED|FAILED|CANCELLED|ROLLED_BACK) break ;; esac
  # Waiting for attention, not for a gate: a step failed; say which, and stop.
  stuck=$(echo "$state" | python3 -c '
import json,sys
d=json.load(sys.stdin)
if d["operation"]["status"] == "WAITING" and not any(g["status"]=="WAITING" for e in d["operations"]["edges"] for g in e["node"]["gates"]):
    print("; ".join(r["node"] + ": " + r["error"] for r in d["operation"]["nodeRuns"] if r["error"]))')
  if [ -n "$stuck" ]; then echo "   needs attention: $stuck" >&2; break; fi
  for pair in $(echo "$state" | python3 -c '
import json,sys
d=json.load(sys.stdin)
for e in d["operations"]["edges"]:
    for g in e["node"]["gates"]:
        if g["status"]=="WAITING": print(e["node"]["id"]+"|"+g["node"]+"|"+e["node"]["scenarioRef"]["scenarioRef"])'); do
    IFS='|' read -r o n s <<<"$pair"
    gql "$sre" 'mutation($o: ID!, $n: String!) { decideGate(input: {operation: $o, node: $n, approve: true, comment: "reviewed"}) { status } }' \
      "{\"o\": \"$o\", \"n\": \"$n\"}" >/dev/null && echo "   approved $n of $s"
  done
  sleep 0.5
done
echo "4. operation $status"
report=$(gql "$admin" 'query($id: ID!) { operation(id: $id) { resource { key relationships { type targetKey } }
  evidence { producedBy item result simulated source } nodeRuns { node status error } } }' "{\"id\": \"$op\"}")
echo "$report" | python3 -c '
import json,sys
o=json.load(sys.stdin)["operation"]
for r in o["nodeRuns"]:
    if r["error"]: print("   error", r["node"] + ":", r["error"])
print("5. evidence (%d items, %d simulated)" % (len(o["evidence"]), sum(1 for e in o["evidence"] if e["simulated"])))
for e in o["evidence"]:
    s = e["source"] or {}
    what = {"kubernetes": lambda: "%s %s/%s uid %s resourceVersion %s: %s" % (s.get("kind"), s.get("namespace", "-"), s.get("name"), s.get("uid"), s.get("resource_version"), s.get("status")),
            "s3": lambda: "%s bucket %s: %s" % (s.get("endpoint"), s.get("bucket"), s.get("note") or "PUT, GET and DELETE of " + str(s.get("key"))),
            "sub_operation": lambda: "created %s by %s" % (s.get("resource"), s.get("operation"))}.get(s.get("type"), lambda: json.dumps(s)[:160])()
    print("   %-18s %-24s %s  %s" % (e["producedBy"], e["item"], "SIMULATED" if e["simulated"] else e["result"], what))
r=o["resource"]
print("   resource", r["key"], "uses", ", ".join(x["targetKey"] for x in r["relationships"]))'
if [ "$status" != SUCCEEDED ]; then
  gql "$admin" '{ operations(first: 20) { edges { node { id status plan { scenarioRef } nodeRuns { node status error } } } } }' | python3 -c '
import json,sys
for e in json.load(sys.stdin)["operations"]["edges"]:
    o=e["node"]
    for r in o["nodeRuns"]:
        if r["error"]: print("   ", o["plan"]["scenarioRef"], o["status"], r["node"] + ":", r["error"])' >&2
  echo "FAILED: the operation ended $status" >&2; exit 1
fi
store=$(echo "$report" | python3 -c '
import json,sys
for x in json.load(sys.stdin)["operation"]["resource"]["relationships"]:
    if x["targetKey"].startswith("minio.instance/"): print(x["targetKey"])')
gql "$admin" 'query($k: String!) { resource(key: $k) { key providedCapabilities { capability attributes } relationships { type targetKey } } }' "{\"k\": \"$store\"}" | python3 -c '
import json,sys
r=json.load(sys.stdin)["resource"]
a=[c for c in r["providedCapabilities"] if c["capability"]=="object_storage.s3"][0]["attributes"]
print("   store", r["key"], "runs on", ", ".join(x["targetKey"] for x in r["relationships"] if x["type"]=="RUNS_ON"))
print("   store endpoint", a.get("endpoint"), "| keys by reference:", a.get("access_key"), a.get("secret_key"))'
echo "   live: $(k -n "$name" get deploy,svc,secret,configmap -o name | tr '\n' ' ')"
[ "$status" = SUCCEEDED ] || { echo "FAILED: the operation ended $status" >&2; exit 1; }
echo "OK: Tempo's chart is installed on the cluster, its traces bucket on a dedicated S3 server a sub-operation started, approved by a second person"

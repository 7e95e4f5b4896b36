#!/usr/bin/env bash
# The real-targets story, end to end, on this machine (as root):
#   1. three test hosts come up (network namespaces, each a real sshd);
#   2. linux-service is installed on all three through GraphQL, each
#      install proven by probes of real state on its own host;
#   3. someone edits a config file by hand on one host;
#   4. an assessment marks that host DRIFTED, with the diff;
#   5. a repair is planned, approved by a second person (a gate) and run,
#      and the host is healthy again.
# It starts its own server (bin/capstan, or $CAPSTAN_BIN) on a free port
# with a throwaway data directory; extra serve flags come from
# $CAPSTAN_SERVE_FLAGS (the test runs it on Neo4j too). Everything it made
# is removed when it ends.
#
#   make demo-real        # as root
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${CAPSTAN_BIN:-$here/../bin/capstan}
[ "$(id -u)" -eq 0 ] || { echo "demo-real: needs root (the test hosts are network namespaces)" >&2; exit 1; }
[ -x "$bin" ] || { echo "demo-real: no $bin: run make build" >&2; exit 1; }

work=$(mktemp -d /var/tmp/capstan-demo-real.XXXXXX) # not /tmp: each host mounts its own there
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  bash "$here/testhosts.sh" down "$work/hosts" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "1. test hosts"
bash "$here/testhosts.sh" up "$work/hosts" 3 > "$work/hosts.txt"
sed 's/^/   /; s/ ssh-ed25519 .*//' "$work/hosts.txt"

admin="demo-admin-token-0123456789"
sre="demo-sre-token-0123456789"
cat > "$work/tokens.yaml" <<EOF
tokens:
  - {token: $admin, actor: alice, organization: demo, roles: [admin]}
  - {token: $sre, actor: sam, organization: demo, roles: [sre]}
EOF
. "$here/lib.sh"
serve_throwaway "$work" 10.0.0.0/8 # sets url and server

catalog=$(python3 - "$work/hosts.txt" <<'PY'
import json, sys
rows = [l.split(None, 3) for l in open(sys.argv[1]) if l.strip()]
doc = "organization: demo\nenvironments: [lab]\ncompute_nodes:\n" + "".join(
    f'  - {{name: {n}, environment: lab, os: debian, ssh_user: root, address: "{a}", ssh_port: {p}, ssh_host_key: "{k.strip()}", ssh_private_key: "secret:lab-hosts-key", health: healthy}}\n'
    for n, a, p, k in rows)
print(json.dumps({"doc": doc}))
PY
)
gql "$admin" 'mutation($v: String!) { putSecret(input: {name: "lab-hosts-key", value: $v}) { name } }' \
  "$(python3 -c 'import json,sys; print(json.dumps({"v": open(sys.argv[1]).read()}))' "$work/hosts/client_ed25519")" >/dev/null
gql "$admin" 'mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }' "$catalog" >/dev/null

wait_end() { # operation → its final status
  local s=""
  for _ in $(seq 1 600); do
    s=$(gql "$admin" 'query($id: ID!) { operation(id: $id) { status } }' "{\"id\": \"$1\"}" | field '["operation"]["status"]')
    case "$s" in SUCCEEDED|FAILED|CANCELLED|ROLLED_BACK) echo "$s"; return ;; esac
    sleep 0.2
  done
  echo "$s"
}
plan_and_start() { # action name host → operation
  local in plan
  in=$(gql "$admin" 'mutation($a: String!, $n: String!, $h: String!) { createIntent(input: {action: $a, targetResourceType: "linux.service", desiredResult: {name: $n}, constraints: {environment: "lab", host: $h}}) { id } }' \
    "{\"a\": \"$1\", \"n\": \"$2\", \"h\": \"$3\"}" | field '["createIntent"]["id"]')
  plan=$(gql "$admin" 'mutation($id: ID!) { planIntent(input: {intent: $id}) { id } }' "{\"id\": \"$in\"}" | field '["planIntent"]["id"]')
  gql "$admin" 'mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }' "{\"p\": \"$plan\"}" | field '["startOperation"]["id"]'
}

echo "2. install linux-service on each host"
hosts=$(cut -d' ' -f1 "$work/hosts.txt")
declare -A ops
for h in $hosts; do ops[$h]=$(plan_and_start install "hello-$h" "$h"); done
for h in $hosts; do
  s=$(wait_end "${ops[$h]}")
  proof=$(gql "$admin" 'query($id: ID!) { operation(id: $id) { evidence { item result source } } }' "{\"id\": \"${ops[$h]}\"}" | python3 -c '
import json,sys
ev=json.load(sys.stdin)["operation"]["evidence"]
print(", ".join(e["item"]+" "+e["result"].lower()+" on "+str(e["source"].get("host")) for e in ev))')
  echo "   hello-$h: $s ($proof)"
  [ "$s" = SUCCEEDED ] || exit 1
done

first=$(echo "$hosts" | head -1)
echo "3. someone edits /etc/hello/hello.conf by hand on $first"
printf 'port = 8080\nversion = 1.0.0\nworkers = 64\n' > "$work/hosts/$first/fs/etc/hello/hello.conf"

echo "4. assess"
rid=$(gql "$admin" 'query { resource(key: "linux.service/hello-'"$first"'") { id } }' | field '["resource"]["id"]')
gql "$admin" 'mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus assessment { reason diff { field desired observed } evidence { item result source } } } }' "{\"r\": \"$rid\"}" |
  python3 -c '
import json,sys
r=json.load(sys.stdin)["assessResource"]
a=r["assessment"]
print("   hello-'"$first"':", r["healthStatus"], "-", a["reason"])
for d in a["diff"]: print("     ", d["field"], "desired", d["desired"], "observed", d["observed"])
for e in a["evidence"]: print("      probe", e["item"], e["result"].lower(), "on", e["source"].get("host"), e["source"].get("address"))
if r["healthStatus"] != "DRIFTED": sys.exit(1)'
for h in $hosts; do
  [ "$h" = "$first" ] && continue
  echo "   hello-$h: $(gql "$admin" 'query { resource(key: "linux.service/hello-'"$h"'") { healthStatus } }' | field '["resource"]["healthStatus"]') (untouched)"
done

echo "5. repair: a plan, approved by a second person, then run"
plan=$(gql "$admin" 'mutation($r: ID!) { repairResource(input: {resource: $r}) { id status scenario { ref } } }' "{\"r\": \"$rid\"}")
planID=$(echo "$plan" | field '["repairResource"]["id"]')
echo "   plan $(echo "$plan" | field '["repairResource"]["status"]') from $(echo "$plan" | field '["repairResource"]["scenario"]["ref"]')"
op=$(gql "$admin" 'mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }' "{\"p\": \"$planID\"}" | field '["startOperation"]["id"]')
for _ in $(seq 1 300); do
  s=$(gql "$admin" 'query($id: ID!) { operation(id: $id) { status } }' "{\"id\": \"$op\"}" | field '["operation"]["status"]')
  [ "$s" = WAITING ] && break
  sleep 0.2
done
echo "   $(tr '\n' ' ' < "$work/hosts/$first/fs/etc/hello/hello.conf")(on $first, still as edited while the repair waits)"
gql "$sre" 'mutation($o: ID!) { decideGate(input: {operation: $o, node: "approve", approve: true, comment: "config back to its desired state"}) { status } }' "{\"o\": \"$op\"}" >/dev/null
echo "   approved by sam (sre)"
s=$(wait_end "$op")
echo "   repair $s"
[ "$s" = SUCCEEDED ] || exit 1
r=$(gql "$admin" 'mutation($r: ID!) { assessResource(input: {resource: $r}) { healthStatus } }' "{\"r\": \"$rid\"}" | field '["assessResource"]["healthStatus"]')
echo "   hello-$first: $r"
[ "$r" = HEALTHY ] || exit 1
echo "   /etc/hello/hello.conf on $first: $(tr '\n' ' ' < "$work/hosts/$first/fs/etc/hello/hello.conf")"
echo "OK: installed on 3 hosts, drift found with its diff, repaired through an approved plan, healthy again"

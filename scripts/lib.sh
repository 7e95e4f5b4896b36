# Shared by the demo scripts.
#
# demo_target sets url (the GraphQL endpoint) and admin (the dev token) the
# way `make run` chose them: CAPSTAN_URL, else http://CAPSTAN_LISTEN/graphql
# (127.0.0.1:8080, a wildcard host reached on 127.0.0.1); CAPSTAN_DEV_TOKEN,
# else the token `make run` kept in CAPSTAN_DATA_DIR/dev-token. It says
# which server it reaches, and stops with one line when it cannot.
demo_target() {
  local listen=${CAPSTAN_LISTEN:-127.0.0.1:8080}
  local host=${listen%:*} port=${listen##*:}
  case $host in "" | 0.0.0.0 | "[::]" | ::) host=127.0.0.1 ;; esac
  url=${CAPSTAN_URL:-http://$host:$port/graphql}
  local tokenfile=${CAPSTAN_DATA_DIR:-data}/dev-token
  admin=${CAPSTAN_DEV_TOKEN:-}
  # make run's own token, only for make run's own server: never sent to a
  # CAPSTAN_URL elsewhere. The server trims it and ignores one too short.
  if [ -z "$admin" ] && [ -z "${CAPSTAN_URL:-}" ] && [ -r "$tokenfile" ]; then
    admin=$(tr -d '[:space:]' <"$tokenfile")
    [ "${#admin}" -ge 16 ] || admin=""
  fi
  if [ -z "$admin" ]; then
    echo "demo: no token: set CAPSTAN_DEV_TOKEN to the token the server printed (for make run's server, CAPSTAN_DATA_DIR to its data directory, which keeps it in dev-token)" >&2
    exit 2
  fi
  echo "demo: against $url (set CAPSTAN_LISTEN as for make run, or CAPSTAN_URL)"
}

# gql TOKEN QUERY [VARIABLES-JSON] posts to $url with a bearer token and
# prints the data. Anything but a GraphQL answer — nothing listening, a
# refused token, another program on the port, a GraphQL error — ends the
# script with one line saying which.
gql() {
  python3 - "$url" "$1" "$2" "${3:-{\}}" <<'PY'
import json, sys, urllib.error, urllib.request
url, token, query, variables = sys.argv[1:]
def stop(why):
    sys.exit("demo: " + url + ": " + why)
req = urllib.request.Request(url, json.dumps({"query": query, "variables": json.loads(variables)}).encode(),
                             {"Content-Type": "application/json", "Authorization": "Bearer " + token})
try:
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = resp.read()
except urllib.error.HTTPError as e:
    body = e.read()
    if e.code == 401:
        stop("the token was refused (401): use the token this server printed, in CAPSTAN_DEV_TOKEN")
    try:
        out = json.loads(body)
    except ValueError:
        stop("HTTP %d and no GraphQL answer: is Capstan listening there? (CAPSTAN_LISTEN, CAPSTAN_URL)" % e.code)
except TimeoutError:
    stop("no answer within 30 s: the server is there but busy, or stuck")
except (urllib.error.URLError, OSError) as e:
    if isinstance(getattr(e, "reason", None), TimeoutError):
        stop("no answer within 30 s: the server is there but busy, or stuck")
    stop("no server answers (%s): start it with make run, or point CAPSTAN_LISTEN / CAPSTAN_URL at it" % getattr(e, "reason", e))
else:
    try:
        out = json.loads(body)
    except ValueError:
        stop("the answer is not GraphQL: is Capstan listening there? (CAPSTAN_LISTEN, CAPSTAN_URL)")
if not isinstance(out, dict) or ("data" not in out and "errors" not in out):
    stop("the answer is not GraphQL: is Capstan listening there? (CAPSTAN_LISTEN, CAPSTAN_URL)")
if out.get("errors"):
    e = out["errors"][0]
    stop("GraphQL error %s: %s" % ((e.get("extensions") or {}).get("code", ""), e.get("message", "")))
print(json.dumps(out["data"]))
PY
}
# field PYTHON-INDEX reads one value of JSON on stdin; with nothing on stdin
# (gql stopped and said why) it stops without a word of its own.
field() {
  python3 -c "
import json, sys
text = sys.stdin.read()
if not text.strip():
    sys.exit(1)
d = json.loads(text)
print(eval('d' + sys.argv[1]))" "$1"
}

# serve_throwaway WORK EGRESS starts $bin serve on a free port with the
# data directory WORK/data, the tokens WORK/tokens.yaml, the egress
# allow-list EGRESS and the extra flags $CAPSTAN_SERVE_FLAGS (the tests
# run it on Neo4j too); it sets server (its pid, for the caller's
# cleanup) and url (its GraphQL endpoint), or stops with its log.
serve_throwaway() {
  local work=$1 egress=$2
  # shellcheck disable=SC2086
  "$bin" serve --listen 127.0.0.1:0 --data-dir "$work/data" --tokens "$work/tokens.yaml" \
    --egress-allow "$egress" --assess-every 5s ${CAPSTAN_SERVE_FLAGS:-} > "$work/server.log" 2>&1 &
  server=$!
  url=""
  for _ in $(seq 1 300); do
    url=$(grep -o '"addr":"http://[^"]*"' "$work/server.log" | head -1 | sed 's/"addr":"//; s/"$//') || true
    [ -n "$url" ] && server_ready "$url" && break
    kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; echo "demo: the server stopped" >&2; exit 1; }
    sleep 0.2
  done
  server_ready "$url" || { cat "$work/server.log" >&2; echo "demo: the server is not ready" >&2; exit 1; }
  url="$url/graphql"
}
server_ready() { python3 -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1]+"/readyz", timeout=2)' "$1" >/dev/null 2>&1; }

# cluster_access WORK grants Capstan's ServiceAccount what the bundled
# packs declare on the cluster of $kubeconfig (capstan cluster rbac, as
# $bin renders it), and sets token (the account's, for an hour) and api
# (the API server's URL); the cluster's CA goes to WORK/ca.pem.
cluster_access() {
  "$bin" cluster rbac --namespace capstan-system --service-account capstan > "$1/grant.yaml"
  # Another demo or test on the same cluster may grant the same at this
  # moment: server-side apply, and once more if the other created first.
  kubectl --kubeconfig "$kubeconfig" apply --server-side --field-manager capstan-demo -f "$1/grant.yaml" >/dev/null 2>&1 ||
    kubectl --kubeconfig "$kubeconfig" apply --server-side --field-manager capstan-demo -f "$1/grant.yaml" >/dev/null
  token=$(kubectl --kubeconfig "$kubeconfig" -n capstan-system create token capstan --duration 1h)
  api=$(kubectl --kubeconfig "$kubeconfig" config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
  kubectl --kubeconfig "$kubeconfig" config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > "$1/ca.pem"
}

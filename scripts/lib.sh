# Shared by the demo scripts: gql TOKEN QUERY [VARIABLES-JSON] posts to
# $url with a bearer token and prints the data (exits on a GraphQL error);
# field PYTHON-INDEX reads one value of JSON on stdin.
gql() {
  python3 - "$url" "$1" "$2" "${3:-{\}}" <<'PY'
import json, sys, urllib.request
url, token, query, variables = sys.argv[1:]
req = urllib.request.Request(url, json.dumps({"query": query, "variables": json.loads(variables)}).encode(),
                             {"Content-Type": "application/json", "Authorization": "Bearer " + token})
out = json.load(urllib.request.urlopen(req))
if out.get("errors"):
    sys.exit("GraphQL error: " + json.dumps(out["errors"]))
print(json.dumps(out["data"]))
PY
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d'+sys.argv[1]))" "$1"; }

package main_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/gqlws"
	"github.com/capstan-dev/capstan/secret"
)

// plantedPack's jobs, probes, a downstream consumer, an ai_analysis node
// and a manual intervention all handle two secrets: a password from the
// secret store and a token the first job mints as a secret artifact. They
// print them as they are and encoded.
const plantedPack = `id: planted
version: 1.0.0
scenarios:
  - id: thing.secretive
    action: install
    target_resource_type: thing
    plan:
      nodes:
        - id: mint
          type: job
          title: Uses the password, mints a token
          job:
            run:
              runner: shell
              script: |
                echo "password=$CAPSTAN_PARAM_PASSWORD"
                printf 'admin:%s' "$CAPSTAN_PARAM_PASSWORD" | base64
                printf '{"password":"%s"}\n' "$CAPSTAN_PARAM_PASSWORD"
                echo "tok-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$CAPSTAN_OUTPUTS/token"
                echo "minted $(cat "$CAPSTAN_OUTPUTS/token")"
            inputs: {parameters: {password: "secret:db-password"}}
            outputs:
              artifacts: [{name: token, type: credential, sensitivity: secret}]
              evidence: [{name: password-echo, type: command, script: 'echo "the password is $CAPSTAN_PARAM_PASSWORD"; exit 3', expect_exit: 3}]
        - id: consume
          type: job
          title: Uses the token downstream
          after: [mint]
          job:
            run: {runner: shell, script: 'echo "ERROR token $(cat "$CAPSTAN_ARTIFACT_TOKEN") refused"; base64 < "$CAPSTAN_ARTIFACT_TOKEN"'}
            inputs: {artifacts: [token]}
            outputs:
              artifacts: [{name: report, type: report, sensitivity: internal}]
              evidence: [{name: token-seen, type: command, script: 'cat "$CAPSTAN_OUTPUTS/token"', output_pattern: "^tok-"}]
        - id: analyze
          type: ai_analysis
          title: Reads the report
          after: [consume]
          analysis: {question: "What did consume print?", inputs: [report, token], output: diagnosis}
        - id: fix
          type: manual_intervention
          title: A person fixes something
          after: [analyze]
          intervention:
            instructions: Fix it.
            verification: [{name: token-present, type: command, script: 'cat "$CAPSTAN_OUTPUTS/token"; test -s "$CAPSTAN_OUTPUTS/token"'}]
        - id: verify
          type: verification
          title: Verify
          after: [fix]
          probes: [{name: token-again, type: command, script: 'base64 "$CAPSTAN_OUTPUTS/token"; grep -q tok- "$CAPSTAN_OUTPUTS/token"'}]
`

const (
	secretAdmin  = "planted-admin-token-0123456789"
	secretViewer = "planted-viewer-token-0123456789"
	secretOp     = "planted-operator-token-0123456789"
)

// recorder keeps every response body a client received.
type recorder struct {
	mu     sync.Mutex
	bodies []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, s)
}

func (r *recorder) post(t *testing.T, p *proc, bearer, query string, vars map[string]any) map[string]any {
	t.Helper()
	reply := postAs(t, p, bearer, query, vars)
	r.add(string(reply.raw))
	var out map[string]any
	require.NoError(t, json.Unmarshal(reply.raw, &out), "%s", reply.raw)
	return out
}

func TestPlantedSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	packs := filepath.Join(dir, "packs")
	require.NoError(t, os.MkdirAll(packs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "planted.yaml"), []byte(plantedPack), 0o644))
	tokens := filepath.Join(dir, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf(`tokens:
  - {token: %q, actor: alice, organization: acme, roles: [admin]}
  - {token: %q, actor: victor, organization: acme, roles: [viewer]}
  - {token: %q, actor: otto, organization: acme, roles: [operator]}
`, secretAdmin, secretViewer, secretOp)), 0o600))
	data := filepath.Join(dir, "data")
	p := start(t, data, "--tokens", tokens, "--packs", packs)
	rec := &recorder{}

	var raw [12]byte
	_, _ = rand.Read(raw[:])
	password := "Planted-" + hex.EncodeToString(raw[:])
	put := rec.post(t, p, secretAdmin, `mutation($v: String!) { putSecret(input: {name: "db-password", value: $v}) { name ref } }`, map[string]any{"v": password})
	require.Nil(t, put["errors"], "%v", put)
	require.Equal(t, "secret:db-password", dig(put, "data", "putSecret", "ref"))
	refused := rec.post(t, p, secretOp, `mutation { putSecret(input: {name: "x-password", value: "operator-value-1"}) { name } }`, nil)
	require.Equal(t, "FORBIDDEN", errCode(refused))

	in := rec.post(t, p, secretAdmin, `mutation { createIntent(input: {action: "install", targetResourceType: "thing", desiredResult: {name: "s1"}, constraints: {environment: "staging"}}) { id } }`, nil)
	plan := rec.post(t, p, secretAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": dig(in, "data", "createIntent", "id")})
	require.Equal(t, "READY", dig(plan, "data", "planIntent", "status"), "%v", plan)
	started := rec.post(t, p, secretAdmin, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": dig(plan, "data", "planIntent", "id")})
	op := dig(started, "data", "startOperation", "id").(string)

	// Every event of the operation, live.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, err := gqlws.Dial(ctx, p.url+"/graphql", secretViewer)
	require.NoError(t, err)
	defer ws.Close()
	require.NoError(t, ws.Subscribe("events", `subscription($op: ID!) { operationEvents(operation: $op) { cursor node { sequence type actor payload } } }`, map[string]any{"op": op}))
	var payloads []string
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		for {
			m, err := ws.Next()
			if err != nil {
				return
			}
			payloads = append(payloads, string(m.Payload))
			if strings.Contains(string(m.Payload), `"operation.succeeded"`) || strings.Contains(string(m.Payload), `"operation.failed"`) {
				return
			}
		}
	}()

	waitNode(t, p, rec, op, "fix", "WAITING_INTERVENTION")
	note := rec.post(t, p, secretAdmin, `mutation($op: ID!, $n: String!) { recordIntervention(input: {operation: $op, node: "fix", note: $n}) { note } }`,
		map[string]any{"op": op, "n": "fixed it with the password " + password})
	require.Nil(t, note["errors"], "%v", note)
	require.NotContains(t, fmt.Sprint(note), password, "the note is masked as it is recorded")
	status := waitStatus(t, p, rec, op)
	require.Equal(t, "SUCCEEDED", status)
	select {
	case <-streamDone:
	case <-time.After(20 * time.Second):
		t.Fatal("the event stream did not end with the operation")
	}

	// Everything a client can read about the operation, as each role.
	const everything = `query($op: ID!) { operation(id: $op) { status currentNodes progress { currentPhase needsAttention }
	  nodeRuns { node status attempts error } gates { node status }
	  evidence { producedBy item result source } artifacts { id name type sensitivity storageRef producedBy }
	  interventions { targetNode note actor } analyses { node analyzer diagnosis recommendation findings { node source detail ref } }
	  timeline(first: 500) { edges { node { sequence type actor payload } } } } }`
	var tokenArtifact string
	for _, who := range []string{secretAdmin, secretViewer, secretOp} {
		got := rec.post(t, p, who, everything, map[string]any{"op": op})
		require.Nil(t, got["errors"], "%v", got)
		require.NotContains(t, fmt.Sprint(got), dir, "a response shows where the server keeps its data")
		for _, a := range dig(got, "data", "operation", "artifacts").([]any) {
			if a.(map[string]any)["name"] == "token" {
				tokenArtifact = a.(map[string]any)["id"].(string)
				require.Equal(t, "secret", a.(map[string]any)["sensitivity"])
				require.True(t, strings.HasPrefix(a.(map[string]any)["storageRef"].(string), "secret:"))
			}
		}
	}
	require.NotEmpty(t, tokenArtifact)
	analyses := rec.post(t, p, secretViewer, `query($op: ID!) { operation(id: $op) { analyses { diagnosis } } }`, map[string]any{"op": op})
	require.Contains(t, fmt.Sprint(analyses), "ERROR token "+secret.Mask+" refused", "the analyzer read the consumer's report, masked")

	// Revealing: a viewer and an operator may not; an admin may, with a
	// reason, audited.
	// Artifact.viewerMayReveal says the same, in the mutation's words.
	verdict := func(who string) map[string]any {
		got := rec.post(t, p, who, `query($op: ID!) { operation(id: $op) { artifacts { name viewerMayReveal { action allowed reason } } } }`, map[string]any{"op": op})
		for _, a := range dig(got, "data", "operation", "artifacts").([]any) {
			if a.(map[string]any)["name"] == "token" {
				return a.(map[string]any)["viewerMayReveal"].(map[string]any)
			}
		}
		t.Fatalf("no token artifact: %v", got)
		return nil
	}
	for _, who := range []string{secretViewer, secretOp} {
		denied := rec.post(t, p, who, `mutation($a: ID!) { revealSecret(input: {artifact: $a, reason: "curious"}) { value } }`, map[string]any{"a": tokenArtifact})
		require.Equal(t, "FORBIDDEN", errCode(denied))
		v := verdict(who)
		require.Equal(t, false, v["allowed"])
		require.Equal(t, denied["errors"].([]any)[0].(map[string]any)["message"], v["reason"])
	}
	require.Equal(t, true, verdict(secretAdmin)["allowed"])
	noReason := rec.post(t, p, secretAdmin, `mutation($a: ID!) { revealSecret(input: {artifact: $a, reason: ""}) { value } }`, map[string]any{"a": tokenArtifact})
	require.Equal(t, "INVALID", errCode(noReason))
	reveal := postRaw(t, p, secretAdmin, `mutation($a: ID!) { revealSecret(input: {artifact: $a, reason: "rotating the token"}) { value expiresAt artifact { name } } }`, map[string]any{"a": tokenArtifact})
	token, _ := dig(reveal, "data", "revealSecret", "value").(string)
	require.True(t, strings.HasPrefix(token, "tok-"), "%v", reveal)
	audit := rec.post(t, p, secretViewer, `query($op: ID!) { operation(id: $op) { timeline(first: 500) { edges { node { type actor payload } } } } }`, map[string]any{"op": op})
	require.Contains(t, fmt.Sprint(audit), "secret.revealed")
	require.Contains(t, fmt.Sprint(audit), "rotating the token")

	// A stored secret's value is never written where people read it: not
	// into an intent, a plan's parameters, nor (as a literal credential)
	// a catalog attribute. Each is refused without repeating the value.
	smuggled := rec.post(t, p, secretAdmin, `mutation($v: String!) { createIntent(input: {action: "install", targetResourceType: "thing", desiredResult: {name: "s2", note: $v}, constraints: {environment: "staging"}}) { id } }`,
		map[string]any{"v": "the password is " + password})
	require.Equal(t, "INVALID", errCode(smuggled))
	require.Contains(t, fmt.Sprint(smuggled), "holds the value of a stored secret")
	in2 := rec.post(t, p, secretAdmin, `mutation { createIntent(input: {action: "install", targetResourceType: "thing", mode: ADVANCED, desiredResult: {name: "s3"}, constraints: {environment: "staging"}}) { id } }`, nil)
	plan2 := rec.post(t, p, secretAdmin, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id version } }`, map[string]any{"id": dig(in2, "data", "createIntent", "id")})
	edited := rec.post(t, p, secretAdmin, `mutation($p: ID!, $ver: Int!, $v: String!) { editPlan(input: {plan: $p, version: $ver, changes: [{op: SET_PARAMETERS, parameters: {dsn: $v}}]}) { id } }`,
		map[string]any{"p": dig(plan2, "data", "planIntent", "id"), "ver": dig(plan2, "data", "planIntent", "version"), "v": "postgres://app:" + password + "@db/app"})
	require.Equal(t, "INVALID", errCode(edited))
	require.Contains(t, fmt.Sprint(edited), "holds the value of a stored secret")
	explained := rec.post(t, p, secretAdmin, `mutation($p: ID!, $ver: Int!, $v: String!) { editPlan(input: {plan: $p, version: $ver, changes: [{op: SET_PARAMETERS, parameters: {replicas: 2}, reason: $v}]}) { id } }`,
		map[string]any{"p": dig(plan2, "data", "planIntent", "id"), "ver": dig(plan2, "data", "planIntent", "version"), "v": "as agreed, the password " + password + " stays"})
	require.Equal(t, "INVALID", errCode(explained), "%v", explained)
	require.Contains(t, fmt.Sprint(explained), "change 1 (set_parameters) reason holds the value of a stored secret")
	literal := rec.post(t, p, secretAdmin, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`,
		map[string]any{"doc": "internal_services:\n  - {name: leaky-db, type: postgres.instance, environment: staging, provides: [{capability: postgres.database, attributes: {password: hunter2-literal}}]}\n"})
	require.Equal(t, "INVALID", errCode(literal), "%v", literal)
	require.Contains(t, fmt.Sprint(literal), "attribute password of postgres.database is sensitive")
	require.NotContains(t, fmt.Sprint(literal), "hunter2-literal")

	// Metrics and logs.
	resp, err := http.Get(p.url + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	leaks := secret.NewRedactor([][]byte{[]byte(password), []byte(token)})
	leaked := func(what, text string) {
		t.Helper()
		if masked := leaks.String(text); masked != text {
			t.Errorf("a secret (or an encoding of it) leaked into %s:\n%s", what, text)
		}
	}
	for i, b := range rec.bodies {
		leaked(fmt.Sprintf("GraphQL response %d", i), b)
	}
	for i, pl := range payloads {
		leaked(fmt.Sprintf("subscription payload %d", i), pl)
	}
	require.Greater(t, len(payloads), 10)
	leaked("/metrics", string(metrics))
	leaked("the server's log", p.output())
	require.Contains(t, fmt.Sprint(rec.bodies), secret.Mask, "what the jobs printed is there, masked")

	// At rest: the store, the diagnostics and the secret store hold no
	// value in the clear; the token's file left the outputs with the
	// operation.
	diagnostics, err := filepath.Glob(filepath.Join(data, "executor", "artifacts", "*", "diagnostics.log"))
	require.NoError(t, err)
	require.Len(t, diagnostics, 1)
	kept, err := os.ReadFile(diagnostics[0])
	require.NoError(t, err)
	require.Contains(t, string(kept), "password="+secret.Mask, "the jobs' output is kept, masked")
	require.Contains(t, string(kept), "minted "+secret.Mask)
	tokenFiles, _ := filepath.Glob(filepath.Join(data, "executor", "outputs", "*", "token"))
	require.Empty(t, tokenFiles, "the secret artifact's file is never kept with the artifacts")
	require.Eventually(t, func() bool { // the loop removes the outputs once it has committed the end
		tokenFiles, _ = filepath.Glob(filepath.Join(jobsOf(data), "outputs", "*", "token"))
		return len(tokenFiles) == 0
	}, 20*time.Second, 50*time.Millisecond, "the secret artifact's file left with its operation")
	for _, dir := range []string{data, jobsOf(data)} {
		require.NoError(t, filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			content, err := os.ReadFile(path)
			if err == nil {
				leaked("the file "+path, string(content))
			}
			return nil
		}))
	}
}

func postRaw(t *testing.T, p *proc, bearer, query string, vars map[string]any) map[string]any {
	t.Helper()
	return (&recorder{}).post(t, p, bearer, query, vars)
}

func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func errCode(resp map[string]any) string {
	errs, _ := resp["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
	code, _ := ext["code"].(string)
	return code
}

func waitNode(t *testing.T, p *proc, rec *recorder, op, node, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		got := rec.post(t, p, secretAdmin, `query($op: ID!) { operation(id: $op) { status nodeRuns { node status } } }`, map[string]any{"op": op})
		for _, r := range dig(got, "data", "operation", "nodeRuns").([]any) {
			if r.(map[string]any)["node"] == node && r.(map[string]any)["status"] == want {
				return
			}
		}
		if s := dig(got, "data", "operation", "status"); s == "FAILED" || s == "CANCELLED" {
			tl := rec.post(t, p, secretAdmin, `query($op: ID!) { operation(id: $op) { timeline(first: 100) { edges { node { type payload } } } } }`, map[string]any{"op": op})
			t.Fatalf("the operation ended %s: %v\n%v", s, got, tl)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("node %s never reached %s", node, want)
}

func waitStatus(t *testing.T, p *proc, rec *recorder, op string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		got := rec.post(t, p, secretAdmin, `query($op: ID!) { operation(id: $op) { status } }`, map[string]any{"op": op})
		switch s := dig(got, "data", "operation", "status").(string); s {
		case "SUCCEEDED", "FAILED", "CANCELLED":
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the operation did not end")
	return ""
}

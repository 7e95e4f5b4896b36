package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/testhosts"
)

// TestAnsibleAttacksInARealServer is issue 42's HIGH finding tried as a
// hostile organization admin would, against a real server and a real
// sshd test host: catalog fields that would rewrite the inventory, the
// command line or known_hosts are refused at import; an inline ansible
// node that delegates to localhost is refused at editPlan (INVALID); one
// whose template runs on the controller anyway (a pipe lookup) runs in
// the job sandbox — as a job's uid, without the tokens file (world-
// readable here) or the data directory, and the marker it writes on the
// server's side never appears.
func TestAnsibleAttacksInARealServer(t *testing.T) {
	t.Parallel()
	hosts := testhosts.Start(t, 1)
	h := hosts.Hosts[0]
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	data := filepath.Join(dir, "data")
	const admin = "ansible-attack-admin-token-0123456789"
	tokens := filepath.Join(dir, "tokens.yaml")
	require.NoError(t, os.WriteFile(tokens, []byte(fmt.Sprintf("tokens:\n  - {token: %q, actor: mallory, organization: acme, roles: [admin]}\n", admin)), 0o644))
	markerDir, err := os.MkdirTemp("/var/lib", "capstan-marker-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(markerDir) })
	require.NoError(t, os.Chmod(markerDir, 0o777))
	marker := filepath.Join(markerDir, "marker")

	packs := filepath.Join(dir, "packs")
	require.NoError(t, os.MkdirAll(packs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(packs, "playground.yaml"), []byte(playgroundPack("- hosts: target\n  gather_facts: false\n  tasks: [{ansible.builtin.ping: {}}]\n")), 0o644))
	t.Run("a pack's playbook that delegates to localhost fails lint", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		require.NoError(t, os.WriteFile(bad, []byte(playgroundPack(fmt.Sprintf("- hosts: target\n  tasks:\n    - {shell: 'id > %s', delegate_to: localhost}\n", marker))), 0o600))
		out, err := exec.Command(binary, "pack", "lint", bad).CombinedOutput()
		require.Error(t, err, "%s", out)
		require.Contains(t, string(out), "node ping: playbook runs on the controller")
		require.Contains(t, string(out), "delegates a task")
	})

	p := start(t, data, "--tokens", tokens, "--packs", packs, "--egress-allow", "10.0.0.0/8")
	gql := func(query string, vars map[string]any) gqlReply { return postAs(t, p, admin, query, vars) }
	require.Empty(t, gql(`mutation($v: String!) { putSecret(input: {name: "test-hosts-key", value: $v}) { name } }`, map[string]any{"v": string(hosts.ClientKey)}).Errors)
	require.Empty(t, gql(`mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": hosts.Catalog("acme", "lab", "test-hosts-key")}).Errors)

	t.Run("catalog fields that reach a command line", func(t *testing.T) {
		row := func(field string) string {
			fields := map[string]string{"address": fmt.Sprintf("%q", h.Address), "ssh_user": "root", "ssh_port": fmt.Sprint(h.Port),
				"ssh_host_key": fmt.Sprintf("%q", h.HostKey), "ssh_private_key": `"secret:test-hosts-key"`}
			k, v, _ := strings.Cut(field, "=")
			fields[k] = v
			var b strings.Builder
			for _, k := range []string{"address", "ssh_user", "ssh_port", "ssh_host_key", "ssh_private_key"} {
				fmt.Fprintf(&b, ", %s: %s", k, fields[k])
			}
			return "organization: acme\nenvironments: [lab]\ncompute_nodes:\n  - {name: evil, environment: lab, os: debian" + b.String() + "}\n"
		}
		for field, refused := range map[string]string{
			`address="169.254.169.254"`:                             "link-local",
			`address="h1;$(id)"`:                                    "RFC 1123",
			`address="-oProxyCommand=id"`:                           "RFC 1123",
			`address="10.20.30.41."`:                                "RFC 1123",
			`ssh_port=0`:                                            "between 1 and 65535",
			`ssh_port=99999`:                                        "between 1 and 65535",
			`ssh_user="root ansible_connection=local"`:              "portable user name",
			`ssh_host_key="` + h.HostKey + `\n* ` + h.HostKey + `"`: "without options",
			`ssh_private_key="secret:globex/sshkey"`:                "does not hold",
		} {
			got := gql(`mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": row(field)})
			require.Equal(t, "INVALID", got.code(), "%s: %v", field, got.Errors)
			require.Contains(t, fmt.Sprint(got.Errors), refused, field)
		}
		got := gql(`{ resource(key: "compute.node/evil") { key } }`, nil)
		require.Nil(t, got.Data["resource"], "nothing of a refused catalog was written")
	})

	plan := func(t *testing.T) map[string]any {
		in := gql(`mutation { createIntent(input: {action: "install", targetResourceType: "playground", mode: ADVANCED, desiredResult: {name: "evil"}, constraints: {environment: "lab", host: "h1"}}) { id } }`, nil)
		require.Empty(t, in.Errors)
		planned := gql(`mutation($id: ID!) { planIntent(input: {intent: $id}) { id version status } }`, map[string]any{"id": in.Data["createIntent"].(map[string]any)["id"]})
		require.Empty(t, planned.Errors)
		pl := planned.Data["planIntent"].(map[string]any)
		require.Equal(t, "READY", pl["status"])
		return pl
	}
	insert := func(pl map[string]any, playbook string) gqlReply {
		spec := map[string]any{"id": "play", "type": "job", "title": "Play", "requires": []string{"host"}, "job": map[string]any{
			"run":     map[string]any{"runner": "ansible", "target": "host", "playbook": playbook, "timeout": "2m"},
			"outputs": map[string]any{"evidence": []any{map[string]any{"name": "reached", "type": "ssh_command", "target": "host", "script": "true"}}}}}
		return gql(`mutation($p: ID!, $v: Int!, $spec: Map!) { editPlan(input: {plan: $p, version: $v, changes: [{op: INSERT_BEFORE, node: "ping", nodeId: "play", spec: $spec}]}) { id version } }`,
			map[string]any{"p": pl["id"], "v": pl["version"], "spec": spec})
	}

	t.Run("delegate_to localhost is refused at editPlan", func(t *testing.T) {
		got := insert(plan(t), fmt.Sprintf("- hosts: target\n  tasks:\n    - shell: id > %s; cat %s\n      delegate_to: localhost\n", marker, tokens))
		require.Equal(t, "INVALID", got.code(), "%v", got.Errors)
		require.Contains(t, fmt.Sprint(got.Errors), "node play: playbook runs on the controller")
		require.Contains(t, fmt.Sprint(got.Errors), "delegates a task")
	})

	t.Run("what a template runs on the controller runs in the sandbox", func(t *testing.T) {
		pl := plan(t)
		play := fmt.Sprintf(`- hosts: target
  gather_facts: false
  tasks:
    - ansible.builtin.debug:
        msg: "uid={{ lookup('pipe', 'id -u') }} tokens={{ lookup('pipe', 'cat %s 2>&1 || true') }} marker={{ lookup('pipe', 'id > %s 2>&1 || echo refused') }} data={{ lookup('pipe', 'ls %s 2>&1 || true') }}"
`, tokens, marker, data)
		got := insert(pl, play)
		require.Empty(t, got.Errors)
		op := gql(`mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": pl["id"]})
		require.Empty(t, op.Errors)
		id := op.Data["startOperation"].(map[string]any)["id"].(string)
		waitForEndAs(t, p, admin, id)
		require.Equal(t, "SUCCEEDED", statusAs(t, p, admin, id))
		logs, err := filepath.Glob(filepath.Join(data, "executor", "artifacts", "*", "diagnostics.log"))
		require.NoError(t, err)
		var text string
		for _, l := range logs {
			b, err := os.ReadFile(l)
			require.NoError(t, err)
			text += string(b)
		}
		require.Regexp(t, `uid=1\d{5}\b`, text, "the play ran, as a job's uid: %s", text)
		require.NotContains(t, text, "uid=0 ")
		require.NotContains(t, text, admin, "the tokens file was not read")
		require.Contains(t, text, "marker=refused")
		_, err = os.Stat(marker)
		require.True(t, os.IsNotExist(err), "nothing was written on the server's side")
	})
	require.Empty(t, gql(`{ viewer { organization } }`, nil).Errors, "the server is unaffected")
}

// playgroundPack is an editable scenario that plays playbook on the host
// named by the intent.
func playgroundPack(playbook string) string {
	return fmt.Sprintf(`id: playground
version: 1.0.0
scenarios:
  - id: playground.install
    action: install
    target_resource_type: playground
    editable: true
    requires:
      - id: host
        capability: linux.host
        strategy: existing
        constraints: {name: "${intent.host}", environment: "${intent.environment}"}
    plan:
      nodes:
        - id: ping
          type: job
          title: Ping the host
          requires: [host]
          job:
            run:
              runner: ansible
              target: host
              timeout: 2m
              playbook: %q
            outputs:
              evidence:
                - {name: reached, type: ssh_command, target: host, script: "true"}
`, playbook)
}

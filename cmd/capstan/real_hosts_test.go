package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/testhosts"
)

// TestLinuxServiceOnRealHosts installs the bundled linux-service pack on
// three real sshd hosts through GraphQL, on both stores: each install is
// proven by probes of real state on its own host (file, service, tcp,
// http), and only that host changed. One host is then upgraded, and one
// has its service removed.
func TestLinuxServiceOnRealHosts(t *testing.T) {
	t.Parallel()
	hosts := testhosts.Start(t, 3)
	for store, args := range bothStores(t, "--egress-allow", "10.0.0.0/8") {
		t.Run(store, func(t *testing.T) {
			p := start(t, t.TempDir(), args...)
			org := p.gql(t, `{ viewer { organization } }`, nil)["viewer"].(map[string]any)["organization"].(string)
			p.gql(t, `mutation($v: String!) { putSecret(input: {name: "test-hosts-key", value: $v}) { name } }`, map[string]any{"v": string(hosts.ClientKey)})
			env := "lab-" + store
			p.gql(t, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": hosts.Catalog(org, env, "test-hosts-key")})

			ops := map[string]string{}
			for _, h := range hosts.Hosts {
				ops[h.Name] = runOn(t, p, "install", "hello-"+h.Name, h.Name, env)
			}
			for _, h := range hosts.Hosts {
				op := ops[h.Name]
				waitForEnd(t, p, op)
				got := p.gql(t, `query($id: ID!) { operation(id: $id) { status plan { nodes { key simulated job { run { runner target } outputs { evidence { name type target path port } } } } } nodeRuns { node status error } evidence { item result source simulated } } }`, map[string]any{"id": op})["operation"].(map[string]any)
				for _, n := range got["plan"].(map[string]any)["nodes"].([]any) {
					require.Equal(t, false, n.(map[string]any)["simulated"], "real work is never marked simulated")
					run := n.(map[string]any)["job"].(map[string]any)["run"].(map[string]any)
					require.Equal(t, map[string]any{"runner": "ssh", "target": "host"}, run, "a reviewer sees where the job runs")
				}
				require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
				items := map[string]map[string]any{}
				for _, e := range got["evidence"].([]any) {
					e := e.(map[string]any)
					require.Equal(t, "PASSED", e["result"], "%v", e)
					require.Equal(t, false, e["simulated"], "%v", e)
					items[e["item"].(string)] = e["source"].(map[string]any)
				}
				for _, item := range []string{"config-written", "process-running", "port-open", "serves-its-version"} {
					require.Contains(t, items, item)
					require.Equal(t, "compute.node/"+h.Name, items[item]["host"], "observed on its own host")
					require.Equal(t, h.Address, items[item]["address"])
				}
				conf, err := os.ReadFile(filepath.Join(h.Root, "etc", "hello", "hello.conf"))
				require.NoError(t, err, "the file is on the host itself")
				require.Equal(t, "port = 8080\nversion = 1.0.0\n", string(conf))
				r := p.gql(t, `query($k: String!) { resource(key: $k) { desiredState lifecycleStatus } }`, map[string]any{"k": "linux.service/hello-" + h.Name})["resource"].(map[string]any)
				require.Equal(t, "1.0.0", r["desiredState"].(map[string]any)["version"], "the operation recorded the desired state its scenario declares: %v", r)
			}

			// Upgrade h1; remove the service from h3.
			first, last := hosts.Hosts[0], hosts.Hosts[2]
			up := runOn(t, p, "upgrade", "hello-"+first.Name, first.Name, env)
			waitForEnd(t, p, up)
			require.Equal(t, "SUCCEEDED", status(t, p, up), "%v", p.gql(t, `query($id: ID!) { operation(id: $id) { nodeRuns { node status error } evidence { item result source } } }`, map[string]any{"id": up}))
			conf, err := os.ReadFile(filepath.Join(first.Root, "etc", "hello", "hello.conf"))
			require.NoError(t, err)
			require.Equal(t, "port = 8080\nversion = 1.1.0\n", string(conf))
			r := p.gql(t, `query($k: String!) { resource(key: $k) { desiredState } }`, map[string]any{"k": "linux.service/hello-" + first.Name})["resource"].(map[string]any)
			require.Equal(t, "1.1.0", r["desiredState"].(map[string]any)["version"], "the upgrade set the new desired state")
			rm := runOn(t, p, "remove", "hello-"+last.Name, last.Name, env)
			waitForEnd(t, p, rm)
			require.Equal(t, "SUCCEEDED", status(t, p, rm), "%v", p.gql(t, `query($id: ID!) { operation(id: $id) { nodeRuns { node status error } evidence { item result source } } }`, map[string]any{"id": rm}))
			_, err = os.Stat(filepath.Join(last.Root, "etc", "hello"))
			require.True(t, os.IsNotExist(err), "removed from its host")
			_, err = os.Stat(filepath.Join(hosts.Hosts[1].Root, "etc", "hello", "hello.conf"))
			require.NoError(t, err, "the other hosts keep theirs")
			for _, h := range hosts.Hosts[:2] { // clean up for the next store
				op := runOn(t, p, "remove", "hello-"+h.Name, h.Name, env)
				waitForEnd(t, p, op)
				require.Equal(t, "SUCCEEDED", status(t, p, op))
			}
		})
	}
}

// runOn creates, plans and starts an intent of the linux-service pack
// for the named host, returning the operation's id.
func runOn(t *testing.T, p *proc, action, name, host, env string) string {
	t.Helper()
	in := p.gql(t, `mutation($a: String!, $n: String!, $h: String!, $e: String!) { createIntent(input: {action: $a, targetResourceType: "linux.service", desiredResult: {name: $n}, constraints: {environment: $e, host: $h}}) { id } }`,
		map[string]any{"a": action, "n": name, "h": host, "e": env})["createIntent"].(map[string]any)["id"]
	plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": in})["planIntent"].(map[string]any)
	require.Equal(t, "READY", plan["status"], "%v", plan)
	op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
	require.NotEmpty(t, op)
	return op
}

// TestTrustOnFirstUseIsAudited: a host whose key is not pinned is refused
// (host_key), unless the pack asks to trust it on first use: then the key
// it presented is pinned on its compute node and host_key.trusted, with
// its fingerprint, is in the timeline; from then on, a job that trusts
// nothing reaches it. Both stores.
func TestTrustOnFirstUseIsAudited(t *testing.T) {
	t.Parallel()
	hosts := testhosts.Start(t, 1)
	h := hosts.Hosts[0]
	pack, err := os.ReadFile(filepath.Join("testdata", "tofu-test.yaml"))
	require.NoError(t, err)
	for store, args := range bothStores(t, "--egress-allow", "10.0.0.0/8") {
		t.Run(store, func(t *testing.T) {
			t.Parallel() // the host is shared: each store's jobs only touch files none asserts on
			p := start(t, t.TempDir(), args...)
			org := p.gql(t, `{ viewer { organization } }`, nil)["viewer"].(map[string]any)["organization"].(string)
			p.gql(t, `mutation($v: String!) { putSecret(input: {name: "test-hosts-key", value: $v}) { name } }`, map[string]any{"v": string(hosts.ClientKey)})
			catalog := strings.Replace(hosts.Catalog(org, "lab", "test-hosts-key"), fmt.Sprintf("ssh_host_key: %q, ", h.HostKey), "", 1)
			require.NotContains(t, catalog, "ssh_host_key")
			p.gql(t, `mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": catalog})
			p.gql(t, `mutation($y: String!) { installScenarioPack(input: {document: $y}) { id } }`, map[string]any{"y": string(pack)})
			run := func(scenario string) string {
				in := p.gql(t, `mutation($s: String!, $h: String!) { createIntent(input: {action: "install", targetResourceType: "test.tofu", scenario: $s,
				  desiredResult: {name: "x"}, constraints: {host: $h}}) { id } }`, map[string]any{"s": scenario, "h": h.Name})["createIntent"].(map[string]any)["id"]
				plan := p.gql(t, `mutation($id: ID!) { planIntent(input: {intent: $id}) { id status problems } }`, map[string]any{"id": in})["planIntent"].(map[string]any)
				require.Equal(t, "READY", plan["status"], "%v", plan)
				op := p.gql(t, `mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
				waitForEnd(t, p, op)
				return op
			}
			node := func() map[string]any {
				return p.gql(t, `query($k: String!) { resource(key: $k) { providedCapabilities { capability attributes } } }`, map[string]any{"k": "compute.node/" + h.Name})["resource"].(map[string]any)
			}
			hostKey := func() any {
				for _, pc := range node()["providedCapabilities"].([]any) {
					if pc := pc.(map[string]any); pc["capability"] == "ssh.access" {
						return pc["attributes"].(map[string]any)["host_key"]
					}
				}
				return nil
			}

			// Not pinned, not trusted: refused before anything runs.
			refused := run("tofu-test.pinned-only")
			got := p.gql(t, `query($id: ID!) { operation(id: $id) { status nodeRuns { node status error } } }`, map[string]any{"id": refused})["operation"].(map[string]any)
			require.Equal(t, "FAILED", got["status"], "%v", got)
			require.Contains(t, got["nodeRuns"].([]any)[0].(map[string]any)["error"], "the catalog pins no host_key for this host", "%v", got)
			require.Nil(t, hostKey(), "nothing pinned")

			// Trusted on first use, as the pack asks: pinned and audited.
			trusting := run("tofu-test.install")
			require.Equal(t, "SUCCEEDED", status(t, p, trusting))
			require.Equal(t, h.HostKey, hostKey(), "the key the host presented is pinned on its compute node")
			tl := p.gql(t, `query($id: ID!) { operation(id: $id) { timeline(first: 100) { edges { node { type actor payload } } } } }`, map[string]any{"id": trusting})
			var audit map[string]any
			for _, e := range tl["operation"].(map[string]any)["timeline"].(map[string]any)["edges"].([]any) {
				if n := e.(map[string]any)["node"].(map[string]any); n["type"] == "host_key.trusted" {
					audit = n
				}
			}
			require.NotNil(t, audit, "host_key.trusted is in the timeline")
			payload := audit["payload"].(map[string]any)
			require.Equal(t, "compute.node/"+h.Name, payload["host"])
			require.Equal(t, h.Address, payload["address"])
			require.Contains(t, payload["fingerprint"], "SHA256:")
			require.Equal(t, h.HostKey, payload["key"])

			// Pinned now: a job that trusts nothing reaches the host.
			require.Equal(t, "SUCCEEDED", status(t, p, run("tofu-test.pinned-only")))
		})
	}
}

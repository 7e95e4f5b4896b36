package main_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/internal/testhosts"
)

const pgAdmin = "pg-admin-token-0123456789"

// TestPostgresIsInstalledOnARealHostAndAnswers is postgres.install@2.0.0
// through the API, on both stores, against a real sshd host: Debian's
// PostgreSQL from the host's image, a cluster made and started there, its
// superuser password generated on the host and kept in the secret store;
// the step's evidence is a real login and query through pgx. The created
// resource names its endpoint and its password by reference, and the
// password it names logs in (the test reads it from the host); a wrong
// one does not.
func TestPostgresIsInstalledOnARealHostAndAnswers(t *testing.T) {
	t.Parallel()
	hosts := testhosts.Start(t, 2)
	i := 0
	for store, args := range bothStores(t, "--egress-allow", "10.0.0.0/8") {
		idx := i // a host of each store's own: each makes its own cluster there
		host := hosts.Hosts[idx]
		i++
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, dir, append([]string{"--tokens", tokensFile(t, dir, "alice acme admin "+pgAdmin)}, args...)...)
			ok := func(q string, vars map[string]any) map[string]any {
				t.Helper()
				r := postAs(t, p, pgAdmin, q, vars)
				require.Empty(t, r.Errors, "%v", r.Errors)
				return r.Data
			}
			ok(`mutation($v: String!) { putSecret(input: {name: "test-hosts-key", value: $v}) { name } }`, map[string]any{"v": string(hosts.ClientKey)})
			ok(`mutation($doc: String!) { importCatalog(input: {document: $doc}) { created } }`, map[string]any{"doc": hosts.Catalog("acme", "lab", "test-hosts-key")})
			in := ok(`mutation($h: String!) { createIntent(input: {action: "install", targetResourceType: "postgres.cluster", desiredResult: {name: "orders-db"}, constraints: {environment: "lab", host: $h}}) { id } }`,
				map[string]any{"h": host.Name})["createIntent"].(map[string]any)["id"]
			plan := ok(`mutation($id: ID!) { planIntent(input: {intent: $id}) { id status scenarioRef problems } }`, map[string]any{"id": in})["planIntent"].(map[string]any)
			require.Equal(t, "READY", plan["status"], "%v", plan)
			require.Equal(t, "postgres.install@2.0.0", plan["scenarioRef"])
			op := ok(`mutation($p: ID!) { startOperation(input: {plan: $p}) { id } }`, map[string]any{"p": plan["id"]})["startOperation"].(map[string]any)["id"].(string)
			waitForEndAs(t, p, pgAdmin, op)
			got := ok(`query($id: ID!) { operation(id: $id) { status nodeRuns { node error } evidence { item result simulated source } } }`, map[string]any{"id": op})["operation"].(map[string]any)
			require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
			var login map[string]any
			for _, e := range got["evidence"].([]any) {
				e := e.(map[string]any)
				require.Equal(t, false, e["simulated"], "%v", e)
				if e["item"] == "accepts-connections" {
					require.Equal(t, "PASSED", e["result"], "%v", e)
					login = e["source"].(map[string]any)
				}
			}
			require.NotNil(t, login, "%v", got["evidence"])
			require.Equal(t, "postgres", login["type"])
			require.Equal(t, host.Address, login["address"])
			require.Equal(t, "postgres", login["user"])
			require.Equal(t, false, login["in_recovery"])
			require.Regexp(t, `^\d+\.\d+`, login["server_version"])

			// What the resource provides: the endpoint, and the password by reference only.
			r := ok(`query { resource(key: "postgres.cluster/orders-db") { lifecycleStatus relationships { type targetKey } providedCapabilities { capability attributes } } }`, nil)["resource"].(map[string]any)
			require.Equal(t, "ACTIVE", r["lifecycleStatus"])
			attrs := r["providedCapabilities"].([]any)[0].(map[string]any)["attributes"].(map[string]any)
			require.Equal(t, "postgres://"+host.Address+":5432", attrs["endpoint"])
			ref, _ := attrs["password"].(string)
			require.True(t, strings.HasPrefix(ref, "secret:operations/"), "%v", attrs)
			// The password it names is the one on the host: it logs in, and a wrong one does not.
			password := strings.TrimSpace(string(hosts.Exec(t, idx, "cat", "/srv/postgres/superuser-password")))
			require.Len(t, password, 32)
			for pw, want := range map[string]bool{password: true, "not-the-password": false} {
				conn, err := pgx.Connect(context.Background(), "postgres://postgres:"+pw+"@"+host.Address+":5432/postgres?sslmode=disable&connect_timeout=10")
				if !want {
					require.Error(t, err)
					continue
				}
				require.NoError(t, err)
				var n int
				require.NoError(t, conn.QueryRow(context.Background(), "SELECT 1 + 1").Scan(&n))
				require.Equal(t, 2, n)
				require.NoError(t, conn.Close(context.Background()))
			}
		})
	}
}

package main_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan/gqlws"
)

// walkThroughDocs returns the GraphQL documents of the walk-through
// (docs/WALKTHROUGH.md), in order: every ```graphql block of the page,
// split into its documents (a block may hold several, one per line start).
func walkThroughDocs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../docs/WALKTHROUGH.md")
	require.NoError(t, err)
	section := string(data)
	require.Contains(t, section, "# Walk-through", "docs/WALKTHROUGH.md is the walk-through")
	var docs []string
	for _, block := range regexp.MustCompile("(?s)```graphql\n(.*?)```").FindAllStringSubmatch(section, -1) {
		var cur []string
		for _, line := range strings.Split(block[1], "\n") {
			if regexp.MustCompile(`^(query|mutation|subscription)\b`).MatchString(line) && len(cur) > 0 {
				docs = append(docs, strings.Join(cur, "\n"))
				cur = nil
			}
			if strings.TrimSpace(line) != "" {
				cur = append(cur, line)
			}
		}
		if len(cur) > 0 {
			docs = append(docs, strings.Join(cur, "\n"))
		}
	}
	return docs
}

var (
	variableUse = regexp.MustCompile(`\$([A-Za-z]+)\s*:`)
	gateNode    = regexp.MustCompile(`decideGate\(input: \{operation: \$(\w+), node: "([^"]+)"`)
)

// TestReadmeWalkThrough runs every GraphQL document of the walk-through
// (docs/WALKTHROUGH.md, linked from the README), as written and in order,
// against a real server in dev mode: each variable a document declares
// was produced by an earlier step, gates are decided as the page says (by
// the second approver), subscriptions answer without errors, and the
// operation ends SUCCEEDED with its intent and plan COMPLETED. The page
// cannot drift from the schema or the product.
func TestReadmeWalkThrough(t *testing.T) {
	t.Parallel()
	docs := walkThroughDocs(t)
	require.GreaterOrEqual(t, len(docs), 10, "the walk-through's documents")
	p := start(t, t.TempDir())
	sre := token + "-sre"
	vars := map[string]any{}
	produced := func(data map[string]any) {
		if v, ok := data["createIntent"].(map[string]any); ok {
			vars["intent"] = v["id"]
		}
		if v, ok := data["planIntent"].(map[string]any); ok {
			vars["plan"], vars["version"] = v["id"], v["version"]
		}
		if v, ok := data["editPlan"].(map[string]any); ok {
			vars["version"] = v["version"]
		}
		if v, ok := data["startOperation"].(map[string]any); ok {
			vars["op"] = v["id"]
		}
		if v, ok := data["resource"].(map[string]any); ok {
			vars["resource"] = v["id"]
		}
		if op, ok := data["operation"].(map[string]any); ok {
			if tl, ok := op["timeline"].(map[string]any); ok {
				if edges := tl["edges"].([]any); len(edges) > 2 {
					vars["after"] = edges[2].(map[string]any)["cursor"] // resume after the third event
				}
			}
			runs, _ := op["nodeRuns"].([]any)
			for _, r := range runs {
				if child, ok := r.(map[string]any)["childOperation"].(map[string]any); ok {
					vars["child"] = child["id"]
				}
			}
		}
	}
	for i, doc := range docs {
		want := map[string]any{}
		for _, m := range variableUse.FindAllStringSubmatch(doc, -1) {
			v, ok := vars[m[1]]
			require.True(t, ok, "document %d uses $%s, which no earlier step produced:\n%s", i+1, m[1], doc)
			want[m[1]] = v
		}
		switch {
		case strings.HasPrefix(doc, "subscription"):
			runSubscription(t, p, doc, want)
		case gateNode.MatchString(doc):
			m := gateNode.FindStringSubmatch(doc)
			waitForGate(t, p, vars[m[1]].(string), m[2])
			data, errs := p.tryAs(t, sre, doc, want)
			require.Empty(t, errs, "document %d:\n%s", i+1, doc)
			require.Equal(t, "APPROVED", data["decideGate"].(map[string]any)["status"], "the second approver's approval counts")
		default:
			if strings.Contains(doc, "childOperation") { // step 5: wait for the sub-operation to start
				waitForChild(t, p, vars["op"].(string))
			}
			if strings.HasPrefix(doc, "query($op") && strings.Contains(doc, "evidence {") { // "the operation completes with evidence"
				waitForEnd(t, p, vars["op"].(string))
			}
			data, errs := p.try(t, doc, want)
			require.Empty(t, errs, "document %d:\n%s", i+1, doc)
			produced(data)
		}
	}
	// The walk-through's last query of the operation ran after it ended.
	final := p.gql(t, `query($op: ID!) { operation(id: $op) { status intent { status } plan { status } resource { lifecycleStatus } } }`, map[string]any{"op": vars["op"]})["operation"].(map[string]any)
	require.Equal(t, "SUCCEEDED", final["status"])
	require.Equal(t, "COMPLETED", final["intent"].(map[string]any)["status"])
	require.Equal(t, "COMPLETED", final["plan"].(map[string]any)["status"])
	require.Equal(t, "ACTIVE", final["resource"].(map[string]any)["lifecycleStatus"])
}

// waitForGate waits until the operation's gate node waits for decisions.
func waitForGate(t testing.TB, p *proc, op, node string) {
	t.Helper()
	require.Eventually(t, func() bool {
		data, errs := p.try(t, `query($id: ID!) { operation(id: $id) { gates { node status } } }`, map[string]any{"id": op})
		if len(errs) > 0 {
			return false
		}
		for _, g := range data["operation"].(map[string]any)["gates"].([]any) {
			if g.(map[string]any)["node"] == node && g.(map[string]any)["status"] == "WAITING" {
				return true
			}
		}
		return false
	}, 60*time.Second, 100*time.Millisecond, "gate %s of %s never waited", node, op)
}

// waitForEnd waits until the operation ended.
func waitForEnd(t testing.TB, p *proc, op string) {
	t.Helper()
	require.Eventually(t, func() bool {
		data, errs := p.try(t, `query($id: ID!) { operation(id: $id) { status } }`, map[string]any{"id": op})
		if len(errs) > 0 {
			return false
		}
		switch data["operation"].(map[string]any)["status"] {
		case "SUCCEEDED", "FAILED", "CANCELLED", "ROLLED_BACK":
			return true
		}
		return false
	}, 90*time.Second, 150*time.Millisecond, "the operation never ended")
}

// waitForChild waits until the operation's sub_operation node started its child.
func waitForChild(t *testing.T, p *proc, op string) {
	t.Helper()
	require.Eventually(t, func() bool {
		data, errs := p.try(t, `query($id: ID!) { operation(id: $id) { nodeRuns { childOperation { id } } } }`, map[string]any{"id": op})
		if len(errs) > 0 {
			return false
		}
		for _, r := range data["operation"].(map[string]any)["nodeRuns"].([]any) {
			if r.(map[string]any)["childOperation"] != nil {
				return true
			}
		}
		return false
	}, 60*time.Second, 100*time.Millisecond, "the sub-operation never started")
}

// runSubscription subscribes over WebSocket and checks the first answer
// is not an error (a subscription that has nothing to say within a
// second, like operations, is fine).
func runSubscription(t *testing.T, p *proc, doc string, vars map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := gqlws.Dial(ctx, p.url+"/graphql", token)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Subscribe("1", doc, vars))
	got := make(chan gqlws.Message, 1)
	go func() {
		if m, err := c.Next(); err == nil {
			got <- m
		}
		close(got)
	}()
	select {
	case m, ok := <-got:
		if ok {
			require.NotEqual(t, "error", m.Type, "%s\n%s", doc, m.Payload)
			require.NotContains(t, string(m.Payload), `"errors"`, "%s", doc)
		}
	case <-time.After(time.Second):
	}
}

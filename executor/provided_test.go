package executor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/service"
)

// keyedPack makes a thing whose install generates a key (a secret
// artifact) and provides it by reference, with its cluster's region and
// an attribute its cluster does not have.
const keyedPack = `id: keyed
version: 1.0.0
resource_types:
  - {key: keyed.thing, display_name: Keyed thing, allowed_actions: [install]}
capabilities:
  - {key: keyed.access, category: test}
scenarios:
  - id: keyed.install
    action: install
    target_resource_type: keyed.thing
    requires:
      - {id: cluster, capability: kubernetes.cluster, strategy: existing, workload: true, constraints: {name: staging-k8s, environment: staging}}
    provides:
      - capability: keyed.access
        attributes:
          kind: plain
          key: "${artifact.key}"
          where: "${binding.cluster.version} in staging"
          nowhere: "${binding.cluster.nothere}"
    plan:
      nodes:
        - id: make-key
          type: job
          title: Make a key
          requires: [cluster]
          job:
            run: {runner: shell, script: 'printf made-on-the-spot-key > "$CAPSTAN_OUTPUTS/key"'}
            outputs:
              artifacts: [{name: key, type: credentials, sensitivity: secret}]
              evidence: [{name: ok, type: command, script: 'true'}]
`

// TestWhatACreatedResourceProvidesIsFilledByItsOperation: the key's
// secret reference and the cluster's version become the new resource's
// attributes when its install succeeds (capstan.KnownProvided keeps them
// out until then: its table test), and
// the one that cannot be filled stays unset, with an event saying why.
func TestWhatACreatedResourceProvidesIsFilledByItsOperation(t *testing.T) {
	forEachStore(t, func(t *testing.T, store capstan.Store) {
		svc, _ := setup(t, store, org)
		admin := as("alice", capstan.RoleAdmin)
		_, err := svc.InstallPackYAML(admin, "keyed.yaml", []byte(keyedPack))
		require.NoError(t, err)
		in, err := svc.CreateIntent(admin, service.IntentInput{Action: "install", TargetResourceType: "keyed.thing",
			DesiredResult: map[string]any{"name": "k1"}, Constraints: map[string]any{"environment": "staging"}})
		require.NoError(t, err)
		plan, err := svc.PlanIntent(admin, in.ID)
		require.NoError(t, err)
		require.Equal(t, capstan.PlanReady, plan.Status, plan.Problems)
		op, err := svc.StartOperation(admin, plan.ID, "")
		require.NoError(t, err)
		op = waitFor(t, store, op.ID, func(o *capstan.Operation) bool { return o.Status.Terminal() })
		require.Equal(t, capstan.OperationSucceeded, op.Status)

		r, err := store.GetResourceByKey(context.Background(), org, "keyed.thing/k1")
		require.NoError(t, err)
		attrs := r.Provides("keyed.access").Attributes
		require.Equal(t, "plain", attrs["kind"])
		require.Equal(t, "1.31 in staging", attrs["where"])
		ref, _ := attrs["key"].(string)
		require.True(t, strings.HasPrefix(ref, "secret:operations/"), "the key by reference, never its value: %v", attrs)
		value, err := vaults[store].Get(context.Background(), org, strings.TrimPrefix(ref, "secret:"))
		require.NoError(t, err)
		require.Equal(t, "made-on-the-spot-key", string(value))
		require.NotContains(t, attrs, "nowhere")

		events, err := store.ListEvents(context.Background(), org, op.ID, 0, 1000)
		require.NoError(t, err)
		var why []string
		for _, e := range events {
			if e.Type == "resource.attribute_unfilled" {
				why = append(why, e.Payload["reason"].(string))
			}
		}
		require.Equal(t, []string{"keyed.access.nowhere: kubernetes.cluster/staging-k8s provides no attribute nothere"}, why)
	})
}

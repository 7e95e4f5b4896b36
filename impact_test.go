package capstan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWeighImpact(t *testing.T) {
	r := func(typ, name, env, op string) *Resource {
		return &Resource{Meta: Meta{ID: typ + name}, Type: typ, Name: name, Environment: env, ActiveOperationID: op}
	}
	root := r("kubernetes.cluster", "k", "prod", "")
	vault, grafana, tempo := r("vault.instance", "v", "prod", "op1"), r("grafana.instance", "g", "prod", ""), r("tempo.instance", "t", "staging", "op2")
	for _, tc := range []struct {
		name string
		walk []Dependency
		want *Impact
	}{
		{"nothing depends on it", nil, &Impact{Root: root, ByType: []ResourceCount{}, ByEnvironment: []ResourceCount{}}},
		{"counted most first, listed by key, each once", []Dependency{{Resource: vault, Depth: 1}, {Resource: tempo, Depth: 2}, {Resource: grafana, Depth: 1}, {Resource: vault, Depth: 2}}, &Impact{
			Root:          root,
			Dependents:    []*Resource{grafana, tempo, vault},
			ByType:        []ResourceCount{{"grafana.instance", 1}, {"tempo.instance", 1}, {"vault.instance", 1}},
			ByEnvironment: []ResourceCount{{"prod", 2}, {"staging", 1}},
			Operating:     []*Resource{tempo, vault},
		}},
		{"the root is not its own dependent", []Dependency{{Resource: root, Depth: 3}}, &Impact{Root: root, ByType: []ResourceCount{}, ByEnvironment: []ResourceCount{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WeighImpact(root, tc.walk)
			require.Equal(t, tc.want, got)
			require.Equal(t, len(tc.want.Dependents), got.Total())
		})
	}
}

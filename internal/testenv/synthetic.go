package testenv

import (
	"fmt"

	"github.com/capstan-dev/capstan"
)

// SyntheticCatalog returns n resources shaped like a large platform: nodes,
// clusters running on them, object storage and secret stores spread over
// environments and regions, so candidate searches have real competition.
func SyntheticCatalog(n int) []*capstan.Resource {
	envs := []string{"prod", "staging", "dev"}
	regions := []string{"eu-central", "eu-west", "us-east", "us-west", "ap-south"}
	var out []*capstan.Resource
	lastCluster := ""
	for i := 0; len(out) < n; i++ {
		env, region := envs[i%len(envs)], regions[i%len(regions)]
		scope := map[string]any{"environment": env, "region": region}
		node := &capstan.Resource{Type: "compute.node", Name: fmt.Sprintf("bulk-node-%d", i), Environment: env,
			LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
			ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "linux.host", Scope: scope, Attributes: map[string]any{"os": "debian"}}, {Capability: "ssh.access"}}}
		out = append(out, node)
		switch i % 4 {
		case 0:
			c := &capstan.Resource{Type: "kubernetes.cluster", Name: fmt.Sprintf("bulk-k8s-%d", i), Environment: env,
				LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
				ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "kubernetes.cluster", Scope: scope}},
				Relationships:        []capstan.Relationship{{Type: capstan.RelRunsOn, Target: node.Key()}}}
			out = append(out, c)
			lastCluster = c.Key()
		case 1:
			mode := "shared"
			if i%3 == 0 {
				mode = "dedicated"
			}
			out = append(out, &capstan.Resource{Type: "minio.instance", Name: fmt.Sprintf("bulk-s3-%d", i), Environment: env,
				LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
				ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "object_storage.s3", Scope: scope,
					Attributes: map[string]any{"encryption": "required", "access_mode": mode, "min_capacity_gb": 100 * (i % 20)}}},
				Relationships: []capstan.Relationship{{Type: capstan.RelRunsOn, Target: lastCluster}}})
		case 2:
			out = append(out, &capstan.Resource{Type: "vault.instance", Name: fmt.Sprintf("bulk-vault-%d", i), Environment: env,
				LifecycleStatus: capstan.LifecycleActive, HealthStatus: capstan.HealthHealthy,
				ProvidedCapabilities: []capstan.ProvidedCapability{{Capability: "secret.store", Scope: scope, Attributes: map[string]any{"engine": "kv-v2"}}}})
		}
	}
	return out[:n]
}

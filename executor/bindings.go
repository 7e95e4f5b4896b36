package executor

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/capstan-dev/capstan"
)

// bindingEnv is what a job learns of the providers bound to what it
// consumes — the requirements its node requires and those whose
// capability its contract takes as input — as environment variables next
// to its parameters, for each requirement REQ:
//
//	CAPSTAN_BINDING_<REQ>_PROVIDER    the provider's key (kubernetes.cluster/prod-k8s)
//	CAPSTAN_BINDING_<REQ>_RESOURCE    the provider's global id (the API's)
//	CAPSTAN_BINDING_<REQ>_CAPABILITY  the capability it provides
//	CAPSTAN_BINDING_<REQ>_ATTRIBUTES  the provided capability's attributes, JSON
//
// Attributes are what the catalog says of the provider: references such
// as endpoint_ref, never secret values (a secret lives in a secret store
// and is referenced). A binding still pending (its sub-operation has not
// run) gives nothing: the node runs after the sub-operation that resolves
// it, which updates the plan first.
func (l *loop) bindingEnv(ctx context.Context, plan *capstan.Plan, n *capstan.PlanNode) (map[string]string, error) {
	var bound []*capstan.ResourceBinding
	for i := range plan.Bindings {
		b := &plan.Bindings[i]
		if b.Parent != "" || b.Status != capstan.BindingResolved || b.Provider == nil {
			continue
		}
		if slices.Contains(n.Requires, b.ID) || (n.Job != nil && slices.Contains(n.Job.Inputs.Capabilities, b.Requirement.Capability)) {
			bound = append(bound, b)
		}
	}
	if len(bound) == 0 {
		return nil, nil
	}
	keys := make([]string, len(bound))
	for i, b := range bound {
		keys[i] = b.Provider.ResourceKey
	}
	providers, err := l.e.cfg.Store.GetResourcesByKey(ctx, l.org, keys)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for i, b := range bound {
		prefix := "CAPSTAN_BINDING_" + envName(b.ID) + "_"
		env[prefix+"PROVIDER"] = b.Provider.ResourceKey
		env[prefix+"CAPABILITY"] = b.Provider.Capability
		attrs := map[string]any{}
		if r := providers[i]; r != nil {
			env[prefix+"RESOURCE"] = capstan.GlobalID(capstan.KindResource, r.ID)
			if pc := r.Provides(b.Provider.Capability); pc != nil && pc.Attributes != nil {
				attrs = pc.Attributes
			}
		}
		data, err := json.Marshal(attrs)
		if err != nil {
			return nil, capstan.Wrap("executor.bindingEnv", err)
		}
		env[prefix+"ATTRIBUTES"] = string(data)
	}
	return env, nil
}

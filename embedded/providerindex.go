package embedded

import (
	"bytes"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
)

// The provider index answers "which plans bind this resource" without
// reading a plan: a field like Resource.boundBy asks it per resource, and
// a scan of the organization's plans per resource cost a whole second per
// item at a few hundred plans. Two buckets, written in the plan write's
// own transaction so they never disagree with the plans:
//
//	provider_bindings: org, resource id, plan id, binding id -> ""
//	plan_providers:    org, plan id, resource id, binding id -> ""
//
// The second lists what a plan's previous write indexed, so a rewrite
// removes exactly that.
var (
	bProviderBindings = []byte("provider_bindings")
	bPlanProviders    = []byte("plan_providers")
)

// indexProviders replaces what the index holds for plan p with its
// current bindings.
func indexProviders(w *writer, org string, p *capstan.Plan) error {
	var stale [][]byte
	err := scan(w.tx.Bucket(bPlanProviders), prefix(org, p.ID), nil, func(k, _ []byte) (bool, error) {
		stale = append(stale, bytes.Clone(k))
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, k := range stale {
		parts := bytes.Split(k, []byte{0}) // org, plan, resource, binding
		if err := w.delete(bProviderBindings, key(string(parts[0]), string(parts[2]), string(parts[1]), string(parts[3]))); err != nil {
			return err
		}
		if err := w.delete(bPlanProviders, k); err != nil {
			return err
		}
	}
	for _, b := range p.Bindings {
		if b.Provider == nil || b.Provider.ResourceID == "" {
			continue
		}
		if err := w.put(bProviderBindings, key(org, b.Provider.ResourceID, p.ID, b.ID), nil); err != nil {
			return err
		}
		if err := w.put(bPlanProviders, key(org, p.ID, b.Provider.ResourceID, b.ID), nil); err != nil {
			return err
		}
	}
	return nil
}

// buildProviderIndex fills the index from every stored plan: once, when a
// database from before the index is opened (a migration: its writes are
// made durable by the checkpoint after it, not logged).
func buildProviderIndex(tx *bolt.Tx) error {
	w := rawWriter(tx)
	return tx.Bucket(bPlans).ForEach(func(k, v []byte) error {
		org, _, _ := bytes.Cut(k, []byte{0})
		var p capstan.Plan
		if err := json.Unmarshal(v, &p); err != nil {
			return err
		}
		w.ops = w.ops[:0]
		return indexProviders(w, string(org), &p)
	})
}

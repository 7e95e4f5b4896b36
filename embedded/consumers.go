package embedded

import (
	"context"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
)

// consumesRelationship reports whether a relationship makes its source a
// consumer of its target (everything but part_of).
func consumesRelationship(t capstan.RelationshipType) bool { return t != capstan.RelPartOf }

// fillConsumers sets each candidate's Consumers from the incoming index,
// in one read transaction: a scan of each returned candidate's own
// incoming edges, never of the store.
func (s *Store) fillConsumers(ctx context.Context, org string, cs []capstan.Candidate) error {
	if len(cs) == 0 {
		return nil
	}
	return s.view(ctx, "embedded.FindCandidates", func(tx *bolt.Tx) error {
		for i := range cs {
			keys, err := consumers(tx, org, cs[i].Resource.Key())
			if err != nil {
				return err
			}
			cs[i].Consumers = keys
		}
		return nil
	})
}

// consumers returns the sorted keys of the resources, not deleted, that
// run on, depend on, use or connect to the resource with key target.
func consumers(tx *bolt.Tx, org, target string) ([]string, error) {
	var out []string
	err := eachIncoming(tx, org, target, func(typ capstan.RelationshipType, sourceID string) error {
		if !consumesRelationship(typ) {
			return nil
		}
		src, err := loadResource(tx, org, sourceID)
		if err != nil || src == nil || src.LifecycleStatus == capstan.LifecycleDeleted {
			return err
		}
		out = append(out, src.Key())
		return nil
	})
	slices.Sort(out)
	return slices.Compact(out), err
}

// eachIncoming calls fn for each relationship pointing at the resource
// with key target: its type and its source's id.
func eachIncoming(tx *bolt.Tx, org, target string, fn func(capstan.RelationshipType, string) error) error {
	p := prefix(org, target)
	return scan(tx.Bucket(bIncoming), p, nil, func(k, _ []byte) (bool, error) {
		rest := k[len(p):]
		var typ string
		for i, c := range rest {
			if c == 0 {
				typ = string(rest[:i])
				break
			}
		}
		return true, fn(capstan.RelationshipType(typ), lastPart(k))
	})
}

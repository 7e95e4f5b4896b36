package embedded

import (
	"context"
	"slices"

	"github.com/capstan-dev/capstan"
)

// consumesRelationship reports whether a relationship makes its source a
// consumer of its target (everything but part_of).
func consumesRelationship(t capstan.RelationshipType) bool { return t != capstan.RelPartOf }

// fillConsumers sets each candidate's Consumers from the incoming index,
// in one read transaction: a scan of each returned candidate's own
// incoming edges, never of the store, and of at most MaxConsumers+1 live
// consumers each.
func (s *Store) fillConsumers(ctx context.Context, org, owner string, cs []capstan.Candidate) error {
	if len(cs) == 0 {
		return nil
	}
	return s.view(ctx, "embedded.FindCandidates", func(tx *rtx) error {
		for i := range cs {
			keys, err := consumers(tx, org, cs[i].Resource.Key(), owner)
			if err != nil {
				return err
			}
			cs[i].Consumers, cs[i].MoreConsumers = capstan.CapConsumers(keys)
		}
		return nil
	})
}

// consumers returns the keys of the resources, not deleted, that run on,
// depend on, use or connect to the resource with key target, but owner
// and what is part_of it; it stops past MaxConsumers (when there are more,
// which ones it lists is the index's order, not the keys').
func consumers(tx *rtx, org, target, owner string) ([]string, error) {
	var out []string
	err := eachIncoming(tx, org, target, func(typ capstan.RelationshipType, sourceID string) (bool, error) {
		if !consumesRelationship(typ) {
			return true, nil
		}
		src, err := loadResource(tx, org, sourceID)
		if err != nil || src == nil || src.LifecycleStatus == capstan.LifecycleDeleted || src.Key() == owner || partOf(src, owner) {
			return err == nil, err
		}
		if !slices.Contains(out, src.Key()) { // two relationships, one consumer
			out = append(out, src.Key())
		}
		return len(out) <= capstan.MaxConsumers, nil // one past the bound says there are more
	})
	return out, err
}

// partOf reports whether r is part_of the resource with key owner.
func partOf(r *capstan.Resource, owner string) bool {
	return owner != "" && slices.ContainsFunc(r.Relationships, func(rel capstan.Relationship) bool {
		return rel.Type == capstan.RelPartOf && rel.Target == owner
	})
}

// eachIncoming calls fn for each relationship pointing at the resource
// with key target — its type and its source's id — while fn says to go on.
func eachIncoming(tx *rtx, org, target string, fn func(capstan.RelationshipType, string) (bool, error)) error {
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
		return fn(capstan.RelationshipType(typ), lastPart(k))
	})
}

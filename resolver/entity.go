package resolver

import (
	"context"

	"github.com/capstan-dev/capstan"
)

// Federation entities (Apollo Federation v2, docs/APOLLO.md). A gateway
// sends references a batch at a time; each is resolved within the
// caller's organization, and one that names nothing of it — another
// organization's, a deleted one, a malformed id — resolves to null, with
// no error whose text could confirm that it exists elsewhere.

// resourcesByKey resolves Resource references through the request's
// loader (one store read for the batch).
func (r *Resolver) resourcesByKey(ctx context.Context, keys []string) ([]*capstan.Resource, error) {
	l, err := r.loaders(ctx)
	if err != nil {
		return nil, err
	}
	// A key no resource of the organization has loads as nil.
	return l.byKey.LoadAll(ctx, keys)
}

// entitiesByID resolves references by global id with get (the caller's
// organization's reads): null for an id of another kind, malformed, or
// not found.
func entitiesByID[T any](ctx context.Context, kind string, ids []string, get func(context.Context, string) (*T, error)) ([]*T, error) {
	if _, err := capstan.ActorFrom(ctx); err != nil {
		return nil, err
	}
	out := make([]*T, len(ids))
	for i, gid := range ids {
		id, err := localID(gid, kind)
		if err != nil {
			continue
		}
		v, err := get(ctx, id)
		if capstan.ErrorCode(err) == capstan.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

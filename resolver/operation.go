package resolver

import (
	"context"
	"strconv"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/graph/model"
	"github.com/capstan-dev/capstan/resolver/events"
)

const kindOperation = capstan.KindOperation

func (r *Resolver) operations(ctx context.Context, filter *model.OperationFilter, first *int, after *string) (*model.OperationConnection, error) {
	n, start, err := pageArgs(first, after)
	if err != nil {
		return nil, err
	}
	f, err := r.operationFilter(ctx, filter)
	if err != nil {
		return nil, err
	}
	f.After, f.Limit = start, n+1
	items, total, err := r.Service.Operations(ctx, f)
	if err != nil {
		return nil, err
	}
	items, cursors, info := storePage(items, n, start, func(o *capstan.Operation) string { return o.ID })
	c := &model.OperationConnection{PageInfo: info, TotalCount: total, Edges: []model.OperationEdge{}}
	for i, o := range items {
		c.Edges = append(c.Edges, model.OperationEdge{Cursor: cursors[i], Node: o})
	}
	return c, nil
}

// operationFilter decodes a GraphQL operation filter.
func (r *Resolver) operationFilter(ctx context.Context, filter *model.OperationFilter) (capstan.OperationFilter, error) {
	var f capstan.OperationFilter
	if filter == nil {
		return f, nil
	}
	var err error
	f.Status = deref(filter.Status)
	if filter.Intent != nil {
		if f.IntentID, err = localID(*filter.Intent, kindIntent); err != nil {
			return f, err
		}
	}
	if filter.Plan != nil {
		if f.PlanID, err = localID(*filter.Plan, kindPlan); err != nil {
			return f, err
		}
	}
	if filter.Resource != nil {
		if f.ResourceKey, err = r.resourceKeyOf(ctx, *filter.Resource); err != nil {
			return f, err
		}
	}
	f.CreatedAfter, f.CreatedBefore = deref(filter.CreatedAfter), deref(filter.CreatedBefore)
	f.AwaitingPatch = deref(filter.AwaitingPatch)
	return f, nil
}

// resourceKeyOf returns the key of the resource a global id names.
func (r *Resolver) resourceKeyOf(ctx context.Context, id string) (string, error) {
	lid, err := localID(id, kindResource)
	if err != nil {
		return "", err
	}
	res, err := r.resourceByID(ctx, lid)
	if err != nil {
		return "", err
	}
	if res == nil {
		return "", capstan.Errorf(capstan.ENOTFOUND, "no %s", capstan.Named("resource", lid))
	}
	return res.Key(), nil
}

// eventCursor is the one format of a timeline cursor: the opaque cursor
// of the event's sequence. operation.timeline, operationEvents (WebSocket
// and SSE), operationProgress and OVERFLOW errors all show it, and each
// accepts what any of them showed.
func eventCursor(seq int64) string { return cursor(strconv.FormatInt(seq, 10)) }

// timelineCursor decodes a timeline cursor ("" is the start).
func timelineCursor(c string) (int64, error) {
	key, err := afterKey(&c)
	if err != nil || key == "" {
		return 0, err
	}
	seq, err := strconv.ParseInt(key, 10, 64)
	if err != nil || seq < 0 {
		return 0, capstan.Errorf(capstan.EINVALID, "after %q is not a timeline cursor", c)
	}
	return seq, nil
}

// timeline pages an operation's events; a cursor is an event's sequence.
func (r *Resolver) timeline(ctx context.Context, op *capstan.Operation, after *string, first *int) (*model.OperationEventConnection, error) {
	n, err := pageSize(first)
	if err != nil {
		return nil, err
	}
	seq, err := timelineCursor(deref(after))
	if err != nil {
		return nil, err
	}
	stored, err := r.Service.Timeline(ctx, op.ID, seq, n+1)
	if err != nil {
		return nil, err
	}
	start := ""
	if seq > 0 {
		start = strconv.FormatInt(seq, 10)
	}
	page, cursors, info := storePage(stored, n, start, func(e capstan.OperationEvent) string { return strconv.FormatInt(e.Sequence, 10) })
	c := &model.OperationEventConnection{PageInfo: info, Edges: []model.OperationEventEdge{}}
	for i := range page {
		c.Edges = append(c.Edges, model.OperationEventEdge{Cursor: cursors[i], Node: events.Of(page[i])})
	}
	return c, nil
}

// operationRef resolves a field that points at an operation by id: nil
// for none.
func (r *Resolver) operationRef(ctx context.Context, id string) (*capstan.Operation, error) {
	if id == "" {
		return nil, nil
	}
	return r.Service.Operation(ctx, id)
}

// eventRef is the local id a timeline event's reference (a global id of
// kind) names; "" when it names none or another kind.
func eventRef(gid, kind string) string {
	if gid == "" {
		return ""
	}
	if _, id, err := capstan.ParseGlobalID(gid, kind); err == nil {
		return id
	}
	return ""
}

// missingAsNil answers a reference whose entity is gone (or not the
// caller's) with null, as a dangling reference in an old event is.
func missingAsNil[T any](v *T, err error) (*T, error) {
	if capstan.ErrorCode(err) == capstan.ENOTFOUND {
		return nil, nil
	}
	return v, err
}

// eventEntity loads what a timeline event's reference (a global id of
// kind) names: nil for none, for another kind, or for an entity gone.
func eventEntity[T any](ctx context.Context, gid, kind string, load func(context.Context, string) (*T, error)) (*T, error) {
	id := eventRef(gid, kind)
	if id == "" {
		return nil, nil
	}
	return missingAsNil(load(ctx, id))
}

func (r *Resolver) eventOperation(ctx context.Context, gid string) (*capstan.Operation, error) {
	return eventEntity(ctx, gid, capstan.KindOperation, r.Service.Operation)
}

func (r *Resolver) eventPlan(ctx context.Context, gid string) (*capstan.Plan, error) {
	return eventEntity(ctx, gid, capstan.KindPlan, r.Service.Plan)
}

func (r *Resolver) eventPatch(ctx context.Context, gid string) (*capstan.PlanPatch, error) {
	return eventEntity(ctx, gid, capstan.KindPatch, r.Service.PlanPatch)
}

func (r *Resolver) eventResource(ctx context.Context, gid string) (*capstan.Resource, error) {
	return eventEntity(ctx, gid, capstan.KindResource, r.resourceByID)
}

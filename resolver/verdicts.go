package resolver

import (
	"context"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/service"
)

// The viewerMay… fields: the caller's verdict on an action, from the
// service's pure checks. A verdict about an operation's objects reads
// what it needs of the operation once per query (operationScene).

// verdict answers a verdict that needs only the caller.
func verdict(ctx context.Context, judge func(*capstan.Actor) capstan.Permission) (*capstan.Permission, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	v := judge(a)
	return &v, nil
}

// sceneVerdict answers a verdict about an object of operation opID.
func (r *Resolver) sceneVerdict(ctx context.Context, opID string, judge func(*capstan.Actor, service.OperationScene) capstan.Permission) (*capstan.Permission, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := r.operationScene(ctx, opID)
	if err != nil {
		return nil, err
	}
	v := judge(a, sc)
	return &v, nil
}

// operationScene reads what verdicts on an operation's gates and
// artifacts need: once per query.
func (r *Resolver) operationScene(ctx context.Context, id string) (service.OperationScene, error) {
	if l, ok := ctx.Value(loadersKey{}).(*loaders); ok {
		return l.scenes.load(ctx, id)
	}
	return r.Service.OperationScene(ctx, id)
}

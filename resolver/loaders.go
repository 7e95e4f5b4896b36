package resolver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vikstrous/dataloadgen"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/service"
)

// loaders batch the lookups nested fields make, so a list of bindings or
// relationships costs one store call per level, not one per item.
type loaders struct {
	byID  *dataloadgen.Loader[string, *capstan.Resource]
	byKey *dataloadgen.Loader[string, *capstan.Resource]
	// records reads an operation's records once per query, however many
	// of its fields (or aliases of it) the query selects; at once (no
	// batching wait), so they are as fresh as the operation read with them.
	records *memo[*capstan.OperationRecords]
	// scenes reads what permission verdicts need of an operation once per
	// query, however many gates and artifacts ask.
	scenes *memo[service.OperationScene]
}

// memo reads a value by id once per query.
type memo[T any] struct {
	fetch func(ctx context.Context, id string) (T, error)
	mu    sync.Mutex
	byID  map[string]*memoEntry[T]
}

type memoEntry[T any] struct {
	once sync.Once
	v    T
	err  error
}

func newMemo[T any](fetch func(ctx context.Context, id string) (T, error)) *memo[T] {
	return &memo[T]{fetch: fetch, byID: map[string]*memoEntry[T]{}}
}

func (m *memo[T]) load(ctx context.Context, id string) (T, error) {
	m.mu.Lock()
	e := m.byID[id]
	if e == nil {
		e = &memoEntry[T]{}
		m.byID[id] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = m.fetch(ctx, id) })
	return e.v, e.err
}

type loadersKey struct{}

func newLoaders(store capstan.Store, svc *service.Service, org string) *loaders {
	wait := dataloadgen.WithWait(time.Millisecond)
	return &loaders{
		byID: dataloadgen.NewLoader(func(ctx context.Context, ids []string) ([]*capstan.Resource, []error) {
			rs, err := store.GetResources(ctx, org, ids)
			return rs, fanErr(err, len(ids))
		}, wait),
		byKey: dataloadgen.NewLoader(func(ctx context.Context, keys []string) ([]*capstan.Resource, []error) {
			rs, err := store.GetResourcesByKey(ctx, org, keys)
			return rs, fanErr(err, len(keys))
		}, wait),
		records: newMemo(func(ctx context.Context, id string) (*capstan.OperationRecords, error) {
			return store.OperationRecords(ctx, org, id)
		}),
		scenes: newMemo(svc.OperationScene),
	}
}

// operationRecords reads an operation's records: once per query (a
// mutation reads them fresh, after what it changed).
func (r *Resolver) operationRecords(ctx context.Context, id string) (*capstan.OperationRecords, error) {
	if !graphql.HasOperationContext(ctx) || graphql.GetOperationContext(ctx).Operation == nil || graphql.GetOperationContext(ctx).Operation.Operation != ast.Query {
		return r.Service.OperationRecords(ctx, id)
	}
	if _, err := capstan.ActorFrom(ctx); err != nil {
		return nil, err
	}
	l, ok := ctx.Value(loadersKey{}).(*loaders)
	if !ok {
		return r.Service.OperationRecords(ctx, id)
	}
	return l.records.load(ctx, id)
}

func fanErr(err error, n int) []error {
	if err == nil {
		return nil
	}
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// Middleware puts per-request loaders, scoped to the caller's organization,
// into the request context. It must run after authentication.
func Middleware(svc *service.Service, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if a, err := capstan.ActorFrom(ctx); err == nil {
			ctx = context.WithValue(ctx, loadersKey{}, newLoaders(svc.Store, svc, a.OrganizationID))
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (r *Resolver) loaders(ctx context.Context) (*loaders, error) {
	if l, ok := ctx.Value(loadersKey{}).(*loaders); ok {
		return l, nil
	}
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	return newLoaders(r.Service.Store, r.Service, a.OrganizationID), nil
}

func (r *Resolver) resourceByID(ctx context.Context, id string) (*capstan.Resource, error) {
	l, err := r.loaders(ctx)
	if err != nil {
		return nil, err
	}
	return l.byID.Load(ctx, id)
}

func (r *Resolver) resourceByKey(ctx context.Context, key string) (*capstan.Resource, error) {
	l, err := r.loaders(ctx)
	if err != nil {
		return nil, err
	}
	return l.byKey.Load(ctx, key)
}

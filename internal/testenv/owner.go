package testenv

import (
	"context"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor"
	"github.com/capstan-dev/capstan/service"
)

// CommandOwner stands for the executor that owns a test's operations,
// for the commands alone: woken by the service, it applies the pending
// commands, one at a time, through the executor's own ApplyCommand, and
// runs nothing (tests that move operations themselves). A test that runs
// a real executor gives it the service's Wakes instead.
type CommandOwner struct {
	Service *service.Service
	Store   capstan.Store
	mu      *sync.Mutex
}

// NewCommandOwner returns the owner of svc's operations on store.
func NewCommandOwner(svc *service.Service, store capstan.Store) CommandOwner {
	return CommandOwner{Service: svc, Store: store, mu: &sync.Mutex{}}
}

// Wake applies the commands of an operation commanded in this process
// (a started one it leaves: it runs nothing).
func (o CommandOwner) Wake(org, operationID string, plan *capstan.Plan) {
	if plan == nil {
		o.Notify(org, operationID)
	}
}

// Notify applies the operation's pending commands, as its owner's loop
// would on its next read.
func (o CommandOwner) Notify(org, operationID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ctx := context.Background()
	recs, err := o.Store.OperationRecords(ctx, org, operationID)
	if err != nil {
		return
	}
	for _, c := range recs.PendingCommands() {
		_ = executor.ApplyCommand(ctx, o.Service, o.Store, org, operationID, c, time.Now(), nil, false) // the waiter reads the outcome
	}
}

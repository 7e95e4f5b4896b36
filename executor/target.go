package executor

import (
	"context"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// targets resolves the hosts a node acts on, by requirement. A
// requirement that is not bound to a compute node with ssh.access (an
// address, a user and at least one pinned host key) is an error the
// attempt fails with, before anything is dialled.
func (l *loop) targets(ctx context.Context, plan *capstan.Plan, n *capstan.PlanNode) (map[string]*job.Target, error) {
	reqs := n.Targets()
	if len(reqs) == 0 {
		return nil, nil
	}
	out := map[string]*job.Target{}
	for _, req := range reqs {
		t, err := job.PlanTarget(ctx, l.e.cfg.Store, l.e.cfg.Secrets, l.org, plan, req)
		if err != nil {
			return nil, err
		}
		out[req] = t
	}
	return out, nil
}

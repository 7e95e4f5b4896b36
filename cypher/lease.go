package cypher

import (
	"context"
	"time"

	"github.com/capstan-dev/capstan"
)

// One executor at a time runs a database's operations: every executor
// resumes every unfinished operation, so two processes on one database
// would both run them (a non-idempotent job twice). The executor holds a
// lease on the database while it runs: one :ExecutorLease node, its
// holder and its expiry in the database's clock (timestamp(), so the
// processes' clocks do not matter), extended well before it expires, and
// its fencing token, one more with every grant to another holder: the
// executor's operation writes carry it (capstan.Fence) and are refused
// once it is not the lease's any more (qApplyStep, checkFence).

const qAcquireLease = `
MERGE (l:ExecutorLease {key: 'executor'})
SET l.locked = true REMOVE l.locked
WITH l, timestamp() AS now
WITH l, now, (l.holder IS NULL OR l.holder = $holder OR l.expires < now) AS free
WITH l, now, free, (free AND (l.holder IS NULL OR l.holder <> $holder)) AS granted
SET l.token = CASE WHEN granted THEN coalesce(l.token, 0) + 1 ELSE coalesce(l.token, 0) END
SET l.holder = CASE WHEN free THEN $holder ELSE l.holder END,
    l.expires = CASE WHEN free THEN now + $ttl ELSE l.expires END
RETURN l.holder AS holder, l.expires AS expires, l.token AS token`

// AcquireExecutorLease takes the executor lease for holder, or extends it
// when holder has it, for ttl. When another holder has it and it has not
// expired, it returns false with that holder and when its lease ends.
func (s *Store) AcquireExecutorLease(ctx context.Context, holder string, ttl time.Duration) (bool, capstan.LeaseHolder, error) {
	if holder == "" || ttl <= 0 {
		return false, capstan.LeaseHolder{}, capstan.Errorf(capstan.EINVALID, "a lease needs a holder and a positive duration")
	}
	res, err := s.writeStatement(ctx, "cypher.AcquireExecutorLease", func(r runner) (any, error) {
		recs, err := collect(ctx, r, qAcquireLease, map[string]any{"holder": holder, "ttl": ttl.Milliseconds()})
		if err != nil || len(recs) == 0 {
			return nil, err
		}
		m := recs[0].AsMap()
		return capstan.LeaseHolder{ID: str(m["holder"]), Until: time.UnixMilli(i64(m["expires"])), Token: i64(m["token"])}, nil
	})
	if err != nil {
		return false, capstan.LeaseHolder{}, err
	}
	current, _ := res.(capstan.LeaseHolder)
	return current.ID == holder, current, nil
}

// ReleaseExecutorLease ends holder's lease at once, so the next executor
// need not wait for it to expire. Releasing a lease one does not hold
// does nothing.
func (s *Store) ReleaseExecutorLease(ctx context.Context, holder string) error {
	_, err := s.writeStatement(ctx, "cypher.ReleaseExecutorLease", func(r runner) (any, error) {
		return collect(ctx, r, `MATCH (l:ExecutorLease {key: 'executor', holder: $holder}) REMOVE l.holder SET l.expires = 0`, map[string]any{"holder": holder})
	})
	return err
}

const qLeaseFence = `
OPTIONAL MATCH (l:ExecutorLease {key: 'executor'})
RETURN l.holder AS holder, coalesce(l.token, 0) AS token`

// checkFence refuses a write under the fence ctx carries when the lease
// is no longer that grant (in the write's transaction).
func checkFence(ctx context.Context, tx runner) error {
	f, ok := capstan.FenceFrom(ctx)
	if !ok {
		return nil
	}
	recs, err := collect(ctx, tx, qLeaseFence, nil)
	if err != nil {
		return err
	}
	current := capstan.Fence{}
	if len(recs) > 0 {
		m := recs[0].AsMap()
		current = capstan.Fence{Holder: str(m["holder"]), Token: i64(m["token"])}
	}
	if current != f {
		return capstan.Fenced(f, current)
	}
	return nil
}

// fenceParams are the parameters of qApplyStep's fence condition.
func fenceParams(ctx context.Context, params map[string]any) map[string]any {
	f, ok := capstan.FenceFrom(ctx)
	params["fenced"], params["fence_holder"], params["fence_token"] = ok, f.Holder, f.Token
	return params
}

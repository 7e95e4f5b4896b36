package cypher

import (
	"context"
	"slices"
	"time"

	"github.com/capstan-dev/capstan"
)

// Executors on one database share its operations by shard (executor/own):
// each shard has a lease, one :ExecutorLease node per shard key with its
// holder, its expiry in the database's clock (timestamp(), so the
// processes' clocks do not matter) and its fencing token, one more with
// every grant to another holder or after a release. The executor's
// operation writes carry the grant they run under (capstan.Fence) and are
// refused once it is not the lease's any more (qApplyStep, checkFence).
// Executors announce themselves as :ExecutorMember nodes, renewed with
// their leases, so each can tell how many share the work.

const qClaimLeases = `
UNWIND $keys AS key
MERGE (l:ExecutorLease {key: key})
SET l.locked = true REMOVE l.locked
WITH l, timestamp() AS now
WITH l, now, (l.holder IS NULL OR l.holder = $holder OR l.expires < now) AS free
WITH l, now, free, (free AND (l.holder IS NULL OR l.holder <> $holder)) AS granted
SET l.token = CASE WHEN granted THEN coalesce(l.token, 0) + 1 ELSE coalesce(l.token, 0) END
SET l.holder = CASE WHEN free THEN $holder ELSE l.holder END,
    l.expires = CASE WHEN free THEN now + $ttl ELSE l.expires END
RETURN l.key AS key, l.holder AS holder, l.expires AS expires, l.token AS token`

// ClaimLeases takes, or extends when holder has them, the leases of keys
// for ttl, each one that is free (never held, released, or expired). It
// returns every key's lease as it is now: holder's or another's.
func (s *Store) ClaimLeases(ctx context.Context, holder string, keys []string, ttl time.Duration) ([]capstan.LeaseHolder, error) {
	if holder == "" || ttl <= 0 {
		return nil, capstan.Errorf(capstan.EINVALID, "a lease needs a holder and a positive duration")
	}
	keys = slices.Sorted(slices.Values(keys)) // every claimer locks in one order: no deadlock
	res, err := s.writeStatement(ctx, "cypher.ClaimLeases", func(r runner) (any, error) {
		recs, err := collect(ctx, r, qClaimLeases, map[string]any{"holder": holder, "ttl": ttl.Milliseconds(), "keys": keys})
		if err != nil {
			return nil, err
		}
		out := make([]capstan.LeaseHolder, 0, len(recs))
		for _, rec := range recs {
			m := rec.AsMap()
			out = append(out, capstan.LeaseHolder{Key: str(m["key"]), ID: str(m["holder"]), Until: time.UnixMilli(i64(m["expires"])), Token: i64(m["token"])})
		}
		return out, nil
	})
	out, _ := res.([]capstan.LeaseHolder)
	return out, err
}

// ReleaseLeases ends holder's leases of keys at once, so another executor
// need not wait for them to expire; a released lease expired when it was
// released (how long a shard has been free, shard.Decide). Releasing a lease one does not hold
// does nothing.
func (s *Store) ReleaseLeases(ctx context.Context, holder string, keys []string) error {
	_, err := s.writeStatement(ctx, "cypher.ReleaseLeases", func(r runner) (any, error) {
		return collect(ctx, r, `UNWIND $keys AS key MATCH (l:ExecutorLease {key: key, holder: $holder}) REMOVE l.holder SET l.expires = timestamp()`,
			map[string]any{"holder": holder, "keys": keys})
	})
	return err
}

const qJoinExecutors = `
MERGE (m:ExecutorMember {holder: $holder})
SET m.expires = timestamp() + $ttl
WITH timestamp() AS now
CALL (now) { MATCH (x:ExecutorMember) WHERE x.expires < now - 3600000 DELETE x }
MATCH (x:ExecutorMember) WHERE x.expires >= now
RETURN x.holder AS holder ORDER BY holder`

// JoinExecutors announces holder as an executor of this database for ttl
// (again, to extend it) and returns every executor announced and not
// expired, holder among them, in order. Members gone for an hour are
// forgotten.
func (s *Store) JoinExecutors(ctx context.Context, holder string, ttl time.Duration) ([]string, error) {
	if holder == "" || ttl <= 0 {
		return nil, capstan.Errorf(capstan.EINVALID, "an executor needs a name and a positive duration")
	}
	res, err := s.writeStatement(ctx, "cypher.JoinExecutors", func(r runner) (any, error) {
		recs, err := collect(ctx, r, qJoinExecutors, map[string]any{"holder": holder, "ttl": ttl.Milliseconds()})
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, len(recs))
		for _, rec := range recs {
			out = append(out, str(rec.AsMap()["holder"]))
		}
		return out, nil
	})
	out, _ := res.([]string)
	return out, err
}

// LeaveExecutors withdraws holder (a clean shutdown): the others share
// its work from their next renewal on.
func (s *Store) LeaveExecutors(ctx context.Context, holder string) error {
	_, err := s.writeStatement(ctx, "cypher.LeaveExecutors", func(r runner) (any, error) {
		return collect(ctx, r, `MATCH (m:ExecutorMember {holder: $holder}) DELETE m`, map[string]any{"holder": holder})
	})
	return err
}

const qLeaseFence = `
OPTIONAL MATCH (l:ExecutorLease {key: $key})
RETURN l.holder AS holder, coalesce(l.token, 0) AS token, coalesce(l.expires, 0) AS expires, timestamp() AS now`

// checkFence refuses a write under fence (nil: none) when its lease
// is no longer that grant, or has run out (in the write's transaction).
//
// The lease is read, not locked: a stalled writer holding the lease's
// lock would hold up every claim, its successor's included. A claim by
// another executor needs the lease to have run out in the database's
// clock, and a write needs it not to have: the write's read comes first.
// What the writer does after its commit is bounded by its own window
// (executor/window.go), which closes before the lease runs out.
func checkFence(ctx context.Context, tx runner, fence *capstan.Fence) error {
	if fence == nil {
		return nil
	}
	f := *fence
	recs, err := collect(ctx, tx, qLeaseFence, map[string]any{"key": f.Key})
	if err != nil {
		return err
	}
	current := capstan.Fence{Key: f.Key}
	var expires, now int64
	if len(recs) > 0 {
		m := recs[0].AsMap()
		current.Holder, current.Token = str(m["holder"]), i64(m["token"])
		expires, now = i64(m["expires"]), i64(m["now"])
	}
	if current != f {
		return capstan.Fenced(f, current)
	}
	if expires <= now {
		return capstan.FenceRanOut(f, time.UnixMilli(expires))
	}
	return nil
}

// fenceParams are the parameters of qApplyStep's fence condition.
func fenceParams(fence *capstan.Fence, params map[string]any) map[string]any {
	var f capstan.Fence
	if fence != nil {
		f = *fence
	}
	params["fenced"], params["fence_key"], params["fence_holder"], params["fence_token"] = fence != nil, f.Key, f.Holder, f.Token
	return params
}

// ExecutorLeases returns every shard lease as it is, and the database's
// clock at the read (leases expire by it).
func (s *Store) ExecutorLeases(ctx context.Context) ([]capstan.LeaseHolder, time.Time, error) {
	type answer struct {
		leases []capstan.LeaseHolder
		now    time.Time
	}
	res, err := s.readOne(ctx, "cypher.ExecutorLeases", func(r runner) (any, error) {
		recs, err := collect(ctx, r, `OPTIONAL MATCH (l:ExecutorLease) RETURN timestamp() AS now, l.key AS key, l.holder AS holder, l.expires AS expires, l.token AS token`, nil)
		if err != nil {
			return nil, err
		}
		var a answer
		for _, rec := range recs {
			m := rec.AsMap()
			a.now = time.UnixMilli(i64(m["now"]))
			if m["key"] != nil {
				a.leases = append(a.leases, capstan.LeaseHolder{Key: str(m["key"]), ID: str(m["holder"]), Until: time.UnixMilli(i64(m["expires"])), Token: i64(m["token"])})
			}
		}
		return a, nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	a := res.(answer)
	return a.leases, a.now, nil
}

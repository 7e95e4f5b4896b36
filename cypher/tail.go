package cypher

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/capstan-dev/capstan"
)

// A process learns of commits made by the others through its timeline
// tailer (live.Tailer): every commit sets the operation's touched time
// (timestamp(), the database's clock) and the tailer asks, once per
// interval, which operations were touched since it last looked, then reads
// the new events of those it has an interest in, all in one query.

// qTouchedOperations and qActiveOperations answer a tailer's read in one
// statement, the database's clock with it: a replica polls every 50 ms
// while commits come (500 ms when idle), so a read is one round trip, not two.
const qTouchedOperations = `
CALL () {
  MATCH (o:Operation) WHERE o.touched >= $since
  RETURN collect(` + touchFields + `) AS touches
}
RETURN timestamp() AS now, touches`

const qActiveOperations = `
CALL () {
  MATCH (o:Operation) WHERE o.active = true
  RETURN collect(` + touchFields + `) AS touches
}
RETURN timestamp() AS now, touches`

// touchFields is what a tailer learns of an operation a commit touched.
const touchFields = `{org: o.org, id: o.id, parent: o.parent, last: o.last_seq, prev: coalesce(o.prev_seq, 0), active: o.active, created: o.created_at, commanded: coalesce(o.commanded, 0)}`

// TouchedOperations returns the operations a commit touched at or after
// since (milliseconds of the database's clock), or, with since 0, every
// unfinished one; and the database's clock at the read.
func (s *Store) TouchedOperations(ctx context.Context, since int64) ([]capstan.OperationTouch, int64, error) {
	type answer struct {
		touches []capstan.OperationTouch
		now     int64
	}
	q := qTouchedOperations
	if since <= 0 {
		q = qActiveOperations
	}
	res, err := s.readTail(ctx, "cypher.TouchedOperations", func(r runner) (any, error) {
		recs, err := collect(ctx, r, q, map[string]any{"since": since})
		if err != nil {
			return nil, err
		}
		if len(recs) != 1 {
			return nil, capstan.Errorf(capstan.EINTERNAL, "reading the touched operations: %d rows, not one", len(recs))
		}
		row := recs[0].AsMap()
		touches, _ := row["touches"].([]any)
		a := answer{now: i64(row["now"]), touches: make([]capstan.OperationTouch, 0, len(touches))}
		for _, t := range touches {
			m, _ := t.(map[string]any)
			created, _ := m["created"].(time.Time)
			active, _ := m["active"].(bool)
			a.touches = append(a.touches, capstan.OperationTouch{OrganizationID: str(m["org"]), ID: str(m["id"]), ParentID: str(m["parent"]),
				LastSequence: i64(m["last"]), PrevSequence: i64(m["prev"]), Active: active, CreatedAt: created, Commanded: i64(m["commanded"])})
		}
		return a, nil
	})
	if err != nil {
		return nil, 0, err
	}
	a := res.(answer)
	return a.touches, a.now, nil
}

const qTimelineNews = `
UNWIND $cursors AS c
MATCH (o:Operation {uid: c.uid})
CALL (c) {
  MATCH (e:Event) WHERE e.op = c.uid AND e.seq > c.after
  WITH e ORDER BY e.seq LIMIT $limit
  RETURN collect(e.json) AS events
}
RETURN o.json AS json, o.last_seq AS last, events`

// TimelineNews reads, in one query, each cursor's operation and up to
// limit of its events after the cursor, in order.
func (s *Store) TimelineNews(ctx context.Context, cursors []capstan.TimelineCursor, limit int) ([]capstan.TimelineNews, error) {
	if len(cursors) == 0 {
		return nil, nil
	}
	rows := make([]map[string]any, len(cursors))
	for i, c := range cursors {
		rows[i] = map[string]any{"uid": uid(c.OrganizationID, c.ID), "after": c.After}
	}
	res, err := s.readTail(ctx, "cypher.TimelineNews", func(r runner) (any, error) {
		recs, err := collect(ctx, r, qTimelineNews, map[string]any{"cursors": rows, "limit": capstan.LimitOr(limit, 500)})
		if err != nil {
			return nil, err
		}
		out := make([]capstan.TimelineNews, 0, len(recs))
		for _, rec := range recs {
			m := rec.AsMap()
			n := capstan.TimelineNews{LastSequence: i64(m["last"])}
			if err := json.Unmarshal([]byte(str(m["json"])), &n.Operation); err != nil {
				return nil, err
			}
			list, _ := m["events"].([]any)
			for _, raw := range list {
				var e capstan.OperationEvent
				if err := json.Unmarshal([]byte(str(raw)), &e); err != nil {
					return nil, err
				}
				n.Events = append(n.Events, e)
			}
			slices.SortFunc(n.Events, func(a, b capstan.OperationEvent) int { return int(a.Sequence - b.Sequence) })
			out = append(out, n)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return res.([]capstan.TimelineNews), nil
}

package cypher_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/live"
)

// TestACommitVisibleLateIsStillTailed: a commit whose transaction stays
// open long after its statement stamped the operation (here held open
// across many of the tailer's reads, beyond its slack) becomes visible
// only when it commits, with a time stamp the tailer's reads have long
// passed. The tailer's lookback still brings it to the operation's
// follower.
func TestACommitVisibleLateIsStillTailed(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	org := "late-" + capstan.NewID()[12:]
	op := startedOperation(t, s, org)
	broker := live.NewBroker(0)
	defer broker.Close()
	sub := broker.Operation(org, op.ID)
	defer sub.Close()
	tailer := &live.Tailer{Timeline: s, Broker: broker, Every: 10 * time.Millisecond, Idle: 10 * time.Millisecond,
		Slack: 50 * time.Millisecond, Lookback: 10 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	tailCtx, stop := context.WithCancel(ctx)
	tailed := make(chan struct{})
	go func() { defer close(tailed); tailer.Run(tailCtx) }()
	defer func() { stop(); <-tailed }()
	require.Eventually(t, func() bool { return tailer.Reads.Load() >= 2 }, 30*time.Second, 5*time.Millisecond, "the tailer's baseline")

	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	defer driver.Close(ctx)
	sess := driver.NewSession(ctx, neo4j.SessionConfig{})
	defer sess.Close(ctx)
	tx, err := sess.BeginTransaction(ctx)
	require.NoError(t, err)
	event, _ := json.Marshal(capstan.OperationEvent{Sequence: 2, Type: "late.commit", Actor: "someone", At: time.Now().UTC()})
	_, err = tx.Run(ctx, `MATCH (o:Operation {uid: $uid}) SET o.touched = timestamp(), o.prev_seq = o.last_seq, o.last_seq = o.last_seq + 1
	  CREATE (:Event {org: $org, op: $uid, seq: o.last_seq, json: $json})`, map[string]any{"uid": org + "|" + op.ID, "org": org, "json": string(event)})
	require.NoError(t, err)
	held := tailer.Reads.Load()
	require.Eventually(t, func() bool { return tailer.Reads.Load() >= held+30 }, 30*time.Second, 5*time.Millisecond,
		"the tailer reads on while the commit is held open, well past its slack")
	require.NoError(t, tx.Commit(ctx))

	select {
	case m := <-sub.C:
		require.NotNil(t, m)
		require.Len(t, m.Events, 1)
		require.Equal(t, "late.commit", m.Events[0].Type)
	case <-time.After(30 * time.Second):
		t.Fatalf("the late commit never reached the follower (%d reads)", tailer.Reads.Load())
	}
}

// TestTheTailerHasItsOwnConnections: with every connection of the
// request pool held by a request, the tailer still reads, on its own two
// (a read that waited for a request's connection would end at the
// deadline, before the pool's acquisition timeout of five seconds).
func TestTheTailerHasItsOwnConnections(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	_, _, err := s.TouchedOperations(ctx, 0) // the schema in place: not this test's wait
	require.NoError(t, err)
	release, err := cypher.HoldRequestConnections(ctx, s)
	require.NoError(t, err)
	defer release()
	bounded, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, now, err := s.TouchedOperations(bounded, 1)
	require.NoError(t, err, "the tailer waited for a request's connection")
	require.Positive(t, now)
	_, err = s.TimelineNews(bounded, []capstan.TimelineCursor{{OrganizationID: "acme", ID: "none"}}, 10)
	require.NoError(t, err)
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()
	_, err = s.GetOperation(short, "acme", "none")
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), "a request does wait for the request pool: %v", err)
}

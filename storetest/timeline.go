package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// Timeline is a store's timeline as another process's tailer reads it
// (cypher.Store; live.Timeline).
type Timeline interface {
	TimelineNews(ctx context.Context, cursors []capstan.TimelineCursor, limit int) ([]capstan.TimelineNews, error)
}

// TimelineNewsSaysWhereTheOperationIs: an operation of seven events read
// three at a time. Each read has the next events in order and the
// operation's last sequence as of its snapshot, so a reader whose events
// stop short of it knows there is more before the snapshot is true.
func TimelineNewsSaysWhereTheOperationIs(t *testing.T, s capstan.Store, tl Timeline) {
	org := "timeline-" + capstan.NewID()[12:]
	op, plan := startedPlanIn(t, s, org, "")
	var evs []capstan.OperationEvent
	for range 7 {
		evs = append(evs, event("node.running"))
	}
	require.NoError(t, s.StartOperation(ctx, org, op, plan, nil, evs, nil))
	var got []int64
	for after := int64(0); after < 7; {
		news, err := tl.TimelineNews(ctx, []capstan.TimelineCursor{{OrganizationID: org, ID: op.ID, After: after}}, 3)
		require.NoError(t, err)
		require.Len(t, news, 1)
		require.Equal(t, op.ID, news[0].Operation.ID)
		require.Equal(t, int64(7), news[0].LastSequence)
		require.NotEmpty(t, news[0].Events)
		require.LessOrEqual(t, len(news[0].Events), 3)
		for _, e := range news[0].Events {
			got = append(got, e.Sequence)
		}
		after = got[len(got)-1]
	}
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, got)
}

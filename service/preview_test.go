package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/service"
)

// blockingPreviewer holds every preview until released.
type blockingPreviewer struct {
	started chan struct{}
	release chan struct{}
}

func (b blockingPreviewer) PreviewPlan(ctx context.Context, org string, plan *capstan.Plan, resource string) []capstan.ObjectPreview {
	b.started <- struct{}{}
	<-b.release
	return []capstan.ObjectPreview{{Node: "apply", Object: resource}}
}

func TestAPlanPreviewIsAskedByWhoMayPlanAndAFewAtATime(t *testing.T) {
	svc, _ := setup(t)
	ctx := testenv.Admin(testenv.Org)
	p := plan(t, svc, advanced("prod"))

	_, err := svc.PreviewPlan(ctx, p)
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), "a server without a previewer says so")

	b := blockingPreviewer{started: make(chan struct{}), release: make(chan struct{})}
	svc.Previewer = b
	viewer := capstan.WithActor(ctx, &capstan.Actor{ID: "v", OrganizationID: testenv.Org, Roles: []string{capstan.RoleViewer}})
	_, err = svc.PreviewPlan(viewer, p)
	require.Equal(t, capstan.EFORBIDDEN, capstan.ErrorCode(err), "a viewer may not make the server reach clusters")

	var wg sync.WaitGroup
	for range service.MaxConcurrentPreviews {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := svc.PreviewPlan(ctx, p)
			if err != nil || len(got) != 1 {
				t.Errorf("preview = %v, %v", got, err)
			}
		}()
		<-b.started
	}
	_, err = svc.PreviewPlan(ctx, p)
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), "one preview more than the server runs at once waits for none: it is refused")
	require.Contains(t, err.Error(), "ask again")
	close(b.release)
	wg.Wait()
	go func() { <-b.started }()
	got, err := svc.PreviewPlan(ctx, p)
	require.NoError(t, err, "a slot is free again")
	require.Len(t, got, 1)
}

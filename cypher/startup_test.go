package cypher_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/service"
)

// TestReplicasStartingTogetherInstallThePacksOnce: replicas started at
// the same instant on one database each install the bundled packs; the
// installs race at the unique constraints, and every one succeeds, since
// the loser reads the winner's pack.
func TestReplicasStartingTogetherInstallThePacksOnce(t *testing.T) {
	ctx := context.Background()
	org := "together-" + capstan.NewID()[12:]
	const replicas = 4
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range replicas {
		svc := service.New(open(t), slog.New(slog.NewTextHandler(io.Discard, nil)))
		wg.Go(func() {
			<-start
			errs[i] = svc.InstallPacks(ctx, org, packs.FS, packs.Order)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "replica %d", i)
	}
	installed, err := open(t).ListPacks(ctx, org)
	require.NoError(t, err)
	require.Len(t, installed, len(packs.Order), "each pack once")
}

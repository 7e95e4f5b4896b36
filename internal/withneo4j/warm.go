package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
	"github.com/capstan-dev/capstan/packs"
	"github.com/capstan-dev/capstan/service"
)

// warmUp is the -warm flag.
var warmUp bool

// warmPool warms the servers up (warm) while the command starts, one
// after another, each under its turn (neo4jtest.HoldTurn): a test waits
// for a warm server instead of taking a cold one, and the first is warm
// within seconds (five JVMs warming at once, beside the tests' compiling,
// kept every server from the tests for a minute and a half). The returned
// group ends when every server is warm. A server that cannot be warmed is
// said so; its first test finds what is wrong with it.
func warmPool(ctx context.Context, pool []*neo4jtest.Server) (*sync.WaitGroup, error) {
	var warming sync.WaitGroup
	releases := make([]func() error, 0, len(pool))
	for _, s := range pool {
		release, err := neo4jtest.HoldTurn(s.URI)
		if err != nil {
			for _, r := range releases {
				r()
			}
			return &warming, err
		}
		releases = append(releases, release)
	}
	warming.Go(func() {
		for i, s := range pool {
			if err := warm(ctx, s); err != nil {
				fmt.Fprintf(os.Stderr, "withneo4j: %v\n", err)
			}
			releases[i]()
		}
	})
	return &warming, nil
}

// warm does on a new server what every test's `capstan serve` does first:
// the schema, the bundled packs and the demo catalog (in an organization
// of its own, which the first test's turn empties). A server's first
// start costs about ten seconds of CPU while its JIT compiles and its
// query plans are made; paid here, while the tests compile, it is not paid
// by a test waiting a minute for its server on a machine busy with others.
func warm(ctx context.Context, s *neo4jtest.Server) error {
	store, err := cypher.Open(cypher.Config{URI: s.URI, User: s.User, Password: s.Password, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer store.Close()
	const org = "withneo4j-warm-up"
	svc := service.New(store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	as := capstan.WithActor(ctx, &capstan.Actor{ID: "withneo4j", OrganizationID: org, Roles: []string{capstan.RoleAdmin}})
	if err := svc.InstallPacks(as, org, packs.FS, packs.Order); err != nil {
		return fmt.Errorf("warming %s up: %w", s.URI, err)
	}
	if err := svc.SeedDemoCatalog(as, org, catalog.Demo); err != nil {
		return fmt.Errorf("warming %s up: %w", s.URI, err)
	}
	return nil
}

// Package postgres holds the postgres probe: a real login and query
// against a PostgreSQL server on the probe's target host, through pgx.
package postgres

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// ProbeTimeout bounds one probe: the connection, the login and the query.
const ProbeTimeout = 20 * time.Second

// Dialer opens the probe's connection (the server's egress policy).
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Probe logs in to the PostgreSQL server on its target host and runs a
// query: the `postgres` probe type. It passes when the server answers as
// a primary that takes writes (not in recovery). Its source records the
// address, the user, the database, the server's version and what the
// query read.
type Probe struct {
	Dial Dialer
}

// Probe implements job.RemoteProbe.
func (p Probe) Probe(ctx context.Context, pr capstan.Probe, t *job.Target) (string, map[string]any, []byte) {
	port, user, db := pr.Port, pr.User, pr.Database
	if port == 0 {
		port = 5432
	}
	if user == "" {
		user = "postgres"
	}
	if db == "" {
		db = "postgres"
	}
	source := map[string]any{"port": port, "user": user, "database": db}
	if len(t.Password) == 0 {
		source["note"] = "no password: the operation has no secret artifact " + pr.PasswordArtifact
		return capstan.EvidenceFailed, source, nil
	}
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return failed(source, err)
	}
	cfg.Host, cfg.Port, cfg.User, cfg.Database, cfg.Password = t.Address, uint16(port), user, db, string(t.Password)
	// No TLS: the servers this probe meets have no certificate Capstan
	// could pin (docs/KUBERNETES.md says so); the password goes by SCRAM.
	cfg.TLSConfig, cfg.Fallbacks = nil, nil
	cfg.ConnectTimeout = ProbeTimeout
	if p.Dial != nil {
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) { return p.Dial(ctx, network, addr) }
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return failed(source, fmt.Errorf("logging in to %s as %s: %w", net.JoinHostPort(t.Address, strconv.Itoa(port)), user, err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var version, current string
	var recovering bool
	var answer int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_database(), pg_is_in_recovery(), 6 * 7").Scan(&version, &current, &recovering, &answer); err != nil {
		return failed(source, fmt.Errorf("querying: %w", err))
	}
	source["server_version"], source["current_database"], source["in_recovery"], source["answer"] = version, current, recovering, answer
	switch {
	case recovering:
		source["note"] = "the server answers but is in recovery (a standby): it takes no writes"
		return capstan.EvidenceFailed, source, nil
	case answer != 42:
		source["note"] = fmt.Sprintf("the server computed 6 * 7 = %d", answer)
		return capstan.EvidenceFailed, source, nil
	}
	return capstan.EvidencePassed, source, nil
}

func failed(source map[string]any, err error) (string, map[string]any, []byte) {
	source["note"] = err.Error()
	return capstan.EvidenceFailed, source, nil
}

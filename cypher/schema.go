package cypher

import (
	"context"
	"errors"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

// schema is applied idempotently at startup: named uniqueness constraints
// (which also index their property) and an index for every other lookup.
var schema = []string{
	`CREATE CONSTRAINT resource_uid IF NOT EXISTS FOR (n:Resource) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT resource_ukey IF NOT EXISTS FOR (n:Resource) REQUIRE n.ukey IS UNIQUE`,
	`CREATE CONSTRAINT capability_uid IF NOT EXISTS FOR (n:Capability) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT profile_uid IF NOT EXISTS FOR (n:Profile) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT resource_type_uid IF NOT EXISTS FOR (n:ResourceType) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT pack_uid IF NOT EXISTS FOR (n:ScenarioPack) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT scenario_uid IF NOT EXISTS FOR (n:Scenario) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT policy_uid IF NOT EXISTS FOR (n:Policy) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT intent_uid IF NOT EXISTS FOR (n:Intent) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT plan_uid IF NOT EXISTS FOR (n:Plan) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT binding_uid IF NOT EXISTS FOR (n:Binding) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT operation_uid IF NOT EXISTS FOR (n:Operation) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT operation_idem IF NOT EXISTS FOR (n:Operation) REQUIRE n.idem_uid IS UNIQUE`,
	`CREATE CONSTRAINT plan_revision_uid IF NOT EXISTS FOR (n:PlanRevision) REQUIRE n.uid IS UNIQUE`,
	`CREATE CONSTRAINT plan_patch_uid IF NOT EXISTS FOR (n:PlanPatch) REQUIRE n.uid IS UNIQUE`,
	`CREATE INDEX plan_patch_op IF NOT EXISTS FOR (n:PlanPatch) ON (n.op)`,
	`CREATE CONSTRAINT executor_lease_key IF NOT EXISTS FOR (n:ExecutorLease) REQUIRE n.key IS UNIQUE`,
	`CREATE CONSTRAINT secret_uid IF NOT EXISTS FOR (n:Secret) REQUIRE n.uid IS UNIQUE`,
	`CREATE INDEX secret_org IF NOT EXISTS FOR (n:Secret) ON (n.org)`,
	`CREATE CONSTRAINT secret_generation_org IF NOT EXISTS FOR (n:SecretGeneration) REQUIRE n.org IS UNIQUE`,
	`CREATE CONSTRAINT executor_member_holder IF NOT EXISTS FOR (n:ExecutorMember) REQUIRE n.holder IS UNIQUE`,
	// An operation's records and events are keyed by what they are, and
	// that key's uniqueness constraint is also the only index they keep
	// (each index is one more write per record on every executor step);
	// the uid constraints and the separate lookup indexes of earlier
	// versions go first.
	`DROP CONSTRAINT op_record_uid IF EXISTS`,
	`DROP CONSTRAINT event_uid IF EXISTS`,
	`DROP INDEX op_record_op IF EXISTS`,
	`DROP INDEX event_op_seq IF EXISTS`,
	`CREATE CONSTRAINT op_record_key IF NOT EXISTS FOR (n:OpRecord) REQUIRE (n.op, n.kind, n.key) IS UNIQUE`,
	`CREATE CONSTRAINT event_seq IF NOT EXISTS FOR (n:Event) REQUIRE (n.op, n.seq) IS UNIQUE`,
	`CREATE INDEX operation_org_id IF NOT EXISTS FOR (n:Operation) ON (n.org, n.id)`,
	`CREATE INDEX operation_active IF NOT EXISTS FOR (n:Operation) ON (n.active)`,
	// What each process's timeline tailer reads (tail.go): the operations
	// a commit touched lately.
	`CREATE INDEX operation_touched IF NOT EXISTS FOR (n:Operation) ON (n.touched)`,
	`CREATE INDEX operation_org_resource IF NOT EXISTS FOR (n:Operation) ON (n.org, n.resource_key)`,
	// Resources are listed through resource_ukey ($org|key sorts as key
	// within an organization); an (org, key) index was one more update
	// per resource write for nothing, and goes.
	`DROP INDEX resource_org_key IF EXISTS`,
	`CREATE INDEX provides_profile_key IF NOT EXISTS FOR ()-[p:PROVIDES]-() ON (p.profile, p.key)`,
	`CREATE INDEX capability_org IF NOT EXISTS FOR (n:Capability) ON (n.org)`,
	`CREATE INDEX resource_type_org IF NOT EXISTS FOR (n:ResourceType) ON (n.org)`,
	`CREATE INDEX pack_org IF NOT EXISTS FOR (n:ScenarioPack) ON (n.org)`,
	`CREATE INDEX scenario_org_id IF NOT EXISTS FOR (n:Scenario) ON (n.org, n.id)`,
	`CREATE INDEX policy_org IF NOT EXISTS FOR (n:Policy) ON (n.org)`,
	`CREATE INDEX intent_org_id IF NOT EXISTS FOR (n:Intent) ON (n.org, n.id)`,
	`CREATE INDEX plan_org_intent IF NOT EXISTS FOR (n:Plan) ON (n.org, n.intent_id)`,
}

func (s *Store) applySchema(ctx context.Context) error {
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	for _, q := range schema {
		if err := s.schemaStatement(ctx, sess, q); err != nil {
			return s.mapErr(ctx, "cypher.schema", err)
		}
	}
	if err := s.schemaStatement(ctx, sess, qAwaitIndexes); err != nil {
		// A database that has not built its indexes in time (a cold one
		// on a loaded machine) is not ready yet: the next call tries
		// again. It is no failure of the schema.
		if ctx.Err() == nil && isProcedureFailure(err) {
			return capstan.Errorf(capstan.EUNAVAILABLE, "neo4j is still building its indexes; try again: %v", err)
		}
		return s.mapErr(ctx, "cypher.schema", err)
	}
	return nil
}

// qAwaitIndexes waits for the schema's indexes to be online.
const qAwaitIndexes = `CALL db.awaitIndexes(60)`

// isProcedureFailure reports whether err is a procedure's failure (as
// db.awaitIndexes fails when its time runs out).
func isProcedureFailure(err error) bool {
	var ne *neo4j.Neo4jError
	return errors.As(err, &ne) && ne.Code == "Neo.ClientError.Procedure.ProcedureCallFailed"
}

// schemaStatement runs one statement of the schema. Replicas starting
// together apply it at once: their schema changes can deadlock (a
// transient error, tried again as a managed transaction would be) or find
// the index made by another between IF NOT EXISTS's check and its write.
func (s *Store) schemaStatement(ctx context.Context, sess neo4j.SessionWithContext, q string) error {
	return retrying(ctx, func() error {
		res, err := sess.Run(ctx, q, nil)
		if err == nil {
			_, err = res.Consume(ctx)
		}
		if madeElsewhere(err) {
			return nil
		}
		return err
	})
}

// madeElsewhere reports whether a schema statement failed because the
// same index or constraint was made between IF NOT EXISTS's check and its
// write: by another process (a replica starting at the same instant), or
// by this one's earlier try, still running in the database after its
// client gave up (a Neo4j just restarted). A name taken means what IF NOT
// EXISTS means: one of that name is there.
func madeElsewhere(err error) bool {
	var ne *neo4j.Neo4jError
	if !errors.As(err, &ne) {
		return false
	}
	for _, code := range []string{"EquivalentSchemaRuleAlreadyExists", "IndexAlreadyExists", "ConstraintAlreadyExists",
		"IndexWithNameAlreadyExists", "ConstraintWithNameAlreadyExists"} {
		if strings.HasSuffix(ne.Code, "."+code) {
			return true
		}
	}
	return false
}

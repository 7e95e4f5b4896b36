package cypher

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/capstan-dev/capstan"
)

var (
	_ capstan.Dumper   = (*Store)(nil)
	_ capstan.Restorer = (*Store)(nil)
)

// Every node a backup holds has a uid (or, for resources, a ukey) that
// starts with its organization and "|": each dump query seeks its label's
// unique index by that prefix.
const (
	qDumpPacks      = `MATCH (p:ScenarioPack) WHERE p.uid STARTS WITH $prefix RETURN p.json AS json`
	qDumpResources  = `MATCH (r:Resource) WHERE r.ukey STARTS WITH $prefix RETURN r.json AS json ORDER BY r.ukey`
	qDumpIntents    = `MATCH (i:Intent) WHERE i.uid STARTS WITH $prefix RETURN i.json AS json ORDER BY i.uid`
	qDumpPlans      = `MATCH (p:Plan) WHERE p.uid STARTS WITH $prefix RETURN p.json AS json ORDER BY p.uid`
	qDumpRevisions  = `MATCH (r:PlanRevision) WHERE r.uid STARTS WITH $prefix RETURN r.json AS json ORDER BY r.uid`
	qDumpOperations = `MATCH (o:Operation) WHERE o.uid STARTS WITH $prefix RETURN o.uid AS uid, o.id AS id, o.json AS json ORDER BY o.uid`
	qDumpRecords    = `MATCH (r:OpRecord) WHERE r.op = $op AND r.kind IS NOT NULL AND r.key IS NOT NULL
RETURN r.kind AS kind, r.key AS key, r.json AS json ORDER BY r.kind, r.key`
	qDumpEvents  = `MATCH (e:Event) WHERE e.op = $op AND e.seq > 0 RETURN e.seq AS seq, e.json AS json ORDER BY e.seq`
	qDumpPatches = `MATCH (x:PlanPatch) WHERE x.uid STARTS WITH $prefix RETURN x.json AS json ORDER BY x.uid`
	qDumpSecrets = `MATCH (s:Secret) WHERE s.uid STARTS WITH $prefix AND s.json IS NOT NULL RETURN s.name AS name, s.json AS json ORDER BY s.uid`
)

// Dump writes org's records from one read transaction: a consistent
// snapshot of the organization while writers go on (what Community's
// offline neo4j-admin dump cannot give). The transaction is explicit and
// never retried: a retry would emit records twice.
func (s *Store) Dump(ctx context.Context, org string, emit func(capstan.BackupRecord) error) error {
	if err := capstan.CheckOrg(org); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	sess := s.session(ctx, neo4j.AccessModeRead)
	defer sess.Close(ctx)
	tx, err := sess.BeginTransaction(ctx)
	if err != nil {
		return s.mapErr(ctx, "cypher.Dump", err)
	}
	defer tx.Close(ctx)
	err = dumpIn(ctx, tx, org, emit)
	if err == nil {
		err = tx.Commit(ctx)
	}
	return s.mapErr(ctx, "cypher.Dump", err)
}

func dumpIn(ctx context.Context, tx runner, org string, emit func(capstan.BackupRecord) error) error {
	prefix := map[string]any{"prefix": org + "|"}
	if err := dumpPacks(ctx, tx, prefix, emit); err != nil {
		return err
	}
	for _, d := range []struct{ q, kind string }{{qDumpResources, capstan.BackupResource}, {qDumpIntents, capstan.BackupIntent},
		{qDumpPlans, capstan.BackupPlan}, {qDumpRevisions, capstan.BackupPlanRevision}} {
		if err := stream(ctx, tx, d.q, prefix, func(m map[string]any) error {
			return emit(capstan.BackupRecord{Kind: d.kind, Data: json.RawMessage(str(m["json"]))})
		}); err != nil {
			return err
		}
	}
	var ops [][2]string // uid, id
	if err := stream(ctx, tx, qDumpOperations, prefix, func(m map[string]any) error {
		ops = append(ops, [2]string{str(m["uid"]), str(m["id"])})
		return emit(capstan.BackupRecord{Kind: capstan.BackupOperation, Data: json.RawMessage(str(m["json"]))})
	}); err != nil {
		return err
	}
	for _, op := range ops {
		if err := dumpOperation(ctx, tx, op[0], op[1], emit); err != nil {
			return err
		}
	}
	if err := stream(ctx, tx, qDumpPatches, prefix, func(m map[string]any) error {
		return emit(capstan.BackupRecord{Kind: capstan.BackupPlanPatch, Data: json.RawMessage(str(m["json"]))})
	}); err != nil {
		return err
	}
	return stream(ctx, tx, qDumpSecrets, prefix, func(m map[string]any) error {
		return emit(capstan.BackupRecord{Kind: capstan.BackupSecret, Key: str(m["name"]), Data: json.RawMessage(str(m["json"]))})
	})
}

// dumpPacks writes the packs in the order they were installed: which
// pack owns a capability both define depends on it.
func dumpPacks(ctx context.Context, tx runner, prefix map[string]any, emit func(capstan.BackupRecord) error) error {
	type stored struct {
		data string
		pack capstan.ScenarioPack
	}
	var packs []stored
	if err := stream(ctx, tx, qDumpPacks, prefix, func(m map[string]any) error {
		p := stored{data: str(m["json"])}
		if err := json.Unmarshal([]byte(p.data), &p.pack); err != nil {
			return err
		}
		packs = append(packs, p)
		return nil
	}); err != nil {
		return err
	}
	slices.SortStableFunc(packs, func(a, b stored) int {
		if c := a.pack.InstalledAt.Compare(b.pack.InstalledAt); c != 0 {
			return c
		}
		return cmp.Compare(a.pack.Ref(), b.pack.Ref())
	})
	for _, p := range packs {
		if err := emit(capstan.BackupRecord{Kind: capstan.BackupPack, Data: json.RawMessage(p.data)}); err != nil {
			return err
		}
	}
	return nil
}

// dumpOperation writes an operation's records and its timeline.
func dumpOperation(ctx context.Context, tx runner, opUID, opID string, emit func(capstan.BackupRecord) error) error {
	params := map[string]any{"op": opUID}
	if err := stream(ctx, tx, qDumpRecords, params, func(m map[string]any) error {
		kind, ok := capstan.BackupKindOf(str(m["kind"]))
		if !ok {
			return nil
		}
		return emit(capstan.BackupRecord{Kind: kind, Operation: opID, Key: str(m["key"]), Data: json.RawMessage(str(m["json"]))})
	}); err != nil {
		return err
	}
	return stream(ctx, tx, qDumpEvents, params, func(m map[string]any) error {
		return emit(capstan.BackupRecord{Kind: capstan.BackupEvent, Operation: opID, Key: strconv.FormatInt(i64(m["seq"]), 10),
			Data: json.RawMessage(str(m["json"]))})
	})
}

// stream runs q and hands each record to fn as it arrives, without
// collecting the result.
func stream(ctx context.Context, tx runner, q string, params map[string]any, fn func(map[string]any) error) error {
	res, err := tx.Run(ctx, q, params)
	if err != nil {
		return err
	}
	for res.Next(ctx) {
		if err := fn(res.Record().AsMap()); err != nil {
			return err
		}
	}
	return res.Err()
}

package backup_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/backup"
	"github.com/capstan-dev/capstan/cypher"
	"github.com/capstan-dev/capstan/embedded"
	"github.com/capstan-dev/capstan/internal/neo4jtest"
	"github.com/capstan-dev/capstan/internal/testenv"
	"github.com/capstan-dev/capstan/secret"
)

var server *neo4jtest.Server

func TestMain(m *testing.M) {
	var err error
	server, err = neo4jtest.Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: Neo4j is part of the test suite and could not start: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := server.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping Neo4j: %v\n", err)
	}
	os.Exit(code)
}

var ctx = context.Background()

// store is one store with the secret side a backup reads and restores.
type store struct {
	kind string
	capstan.Store
	secrets secret.Store
	file    *secret.FileStore // embedded only
}

var key = bytes.Repeat([]byte{7}, secret.KeySize)

func openEmbedded(t testing.TB) store {
	dir := t.TempDir()
	s, err := embedded.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	f, err := secret.OpenFile(filepath.Join(dir, "secrets.json"), key)
	require.NoError(t, err)
	return store{kind: "embedded", Store: s, secrets: f, file: f}
}

func openNeo4j(t testing.TB) store {
	s, err := cypher.Open(cypher.Config{URI: server.URI, User: server.User, Password: server.Password})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return store{kind: "neo4j", Store: s, secrets: secret.NewDB(s, key)}
}

// source is what a backup of org reads from s.
func (s store) source(org string) backup.Source {
	return func(ctx context.Context, emit func(capstan.BackupRecord) error) error {
		if err := s.Store.(capstan.Dumper).Dump(ctx, org, emit); err != nil {
			return err
		}
		if s.file != nil {
			return s.file.SealedRecords(org, emit)
		}
		return nil
	}
}

func (s store) target() backup.Target {
	return backup.Target{Store: s.Store.(capstan.Restorer), Secrets: s.fileOrNil(), BatchRecords: 7} // small batches: many writes
}

// forget removes an organization from the shared Neo4j at the end of a
// test: an executor of another package's tests would resume its
// operations.
func forget(t testing.TB, org string) {
	t.Cleanup(func() { dropOrg(t, org) })
}

// dropOrg removes an organization from the shared Neo4j, ten thousand
// nodes per transaction.
func dropOrg(t testing.TB, org string) {
	driver, err := neo4j.NewDriverWithContext(server.URI, server.Auth())
	require.NoError(t, err)
	defer driver.Close(ctx)
	sess := driver.NewSession(ctx, neo4j.SessionConfig{})
	defer sess.Close(ctx)
	res, err := sess.Run(ctx, `MATCH (n) WHERE n.org = $org CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS`, map[string]any{"org": org})
	require.NoError(t, err)
	_, err = res.Consume(ctx)
	require.NoError(t, err)
}

// fileOrNil is the embedded store's secret file as a backup's secret
// sink, or no sink.
func (s store) fileOrNil() backup.SecretSink {
	if s.file == nil {
		return nil
	}
	return s.file
}

// populate gives org packs, the demo catalog, a planned intent, an
// operation in flight with every kind of record, a proposed patch, and
// secrets (one replaced).
func populate(t *testing.T, s store, org string) *capstan.Operation {
	svc := testenv.DemoIn(t, s.Store, org)
	admin := testenv.Admin(org)
	in, err := svc.CreateIntent(admin, testenv.SeedIntent())
	require.NoError(t, err)
	plan, err := svc.PlanIntent(admin, in.ID)
	require.NoError(t, err)
	in, err = s.GetIntent(ctx, org, in.ID)
	require.NoError(t, err)
	require.NoError(t, plan.Move(capstan.PlanRunning))
	op := &capstan.Operation{IntentID: in.ID, PlanID: plan.ID, PlanRevision: plan.Revision, Action: "install",
		Status: capstan.OperationPending, Actor: "alice", IdempotencyKey: "backup-key", ResourceKey: "tempo.instance/prod-tempo"}
	require.NoError(t, s.StartOperation(ctx, org, op, plan, nil, []capstan.OperationEvent{{Type: "operation.created", Actor: "alice"}}, nil))
	require.NoError(t, op.Move(capstan.OperationRunning))
	node := plan.Nodes[0].ID
	require.NoError(t, s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op,
		NodeRuns:      []capstan.OperationNodeRun{{NodeID: node, Status: capstan.NodeRunning, Attempts: 1}},
		Gates:         []capstan.Gate{{NodeID: "approve", Status: "waiting", Spec: capstan.GateSpec{Type: "approval", Reason: "r", RequiredRoles: []string{"sre"}}}},
		Evidence:      []capstan.Evidence{{ProducedBy: node, Item: "up", Result: capstan.EvidencePassed, Source: map[string]any{"type": "sim"}}},
		Artifacts:     []capstan.Artifact{{Type: "report", Name: "log", Sensitivity: capstan.SensitivityInternal, StorageRef: "file:log", ProducedBy: node}},
		Interventions: []capstan.Intervention{{Type: "manually_fixed", Actor: "bob", TargetNode: node, Note: "restarted"}},
		Events:        []capstan.OperationEvent{{Type: "operation.running", Actor: "executor"}, {Type: "node.running", Actor: "executor"}},
	}))
	changes := []capstan.PlanChange{{Op: capstan.ChangeInsertAfter, Node: node, Template: "smoke"}}
	p := capstan.PlanPatch{OperationID: op.ID, PlanID: plan.ID, BaseRevision: plan.Revision, BaseDigest: plan.Digest, Author: "alice", Reason: "r",
		Changes: changes, Digest: capstan.PatchDigest(plan.Digest, changes), Status: capstan.PatchProposed}
	op.OpenPatches = nil
	ch := &capstan.OperationChange{Operation: op, Patches: []capstan.PlanPatch{p}, Events: []capstan.OperationEvent{{Type: "patch.proposed", Actor: "alice"}}}
	require.NoError(t, s.ApplyOperationChange(ctx, org, ch))
	op.OpenPatches = []string{ch.Patches[0].ID}
	require.NoError(t, s.ApplyOperationChange(ctx, org, &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: "patch.awaiting", Actor: "executor"}}}))
	require.NoError(t, s.RecordCommand(ctx, org, op.ID, &capstan.Command{ID: capstan.NewID(), Kind: capstan.CommandRetryNode, Actor: capstan.Actor{ID: "bob", OrganizationID: org},
		At: time.Now().UTC(), Args: capstan.CommandArgs{Node: node}, Status: capstan.CommandPending}))
	require.NoError(t, s.secrets.Put(ctx, org, "registry-token", []byte("first-value-of-the-token")))
	require.NoError(t, s.secrets.Put(ctx, org, "registry-token", []byte("second-value-of-the-token")))
	require.NoError(t, s.secrets.Put(ctx, org, "kubeconfig-admin", []byte("apiVersion: v1 kind: Config")))
	return op
}

// records dumps org and returns every record as canonical JSON lines,
// sorted: the same records in any order compare equal.
func records(t *testing.T, s store, org string) []string {
	var out []string
	require.NoError(t, s.source(org)(ctx, func(r capstan.BackupRecord) error {
		var data any
		require.NoError(t, json.Unmarshal(r.Data, &data))
		line, err := json.Marshal(map[string]any{"kind": r.Kind, "operation": r.Operation, "key": r.Key, "data": data})
		require.NoError(t, err)
		out = append(out, string(line))
		return nil
	}))
	slices.Sort(out)
	return out
}

// TestABackupRestoresOntoEitherStore backs up each store and restores it
// onto each: the restored organization dumps to the same records, every
// read the API makes answers the same, and the restored operation takes
// its next step where it stopped.
func TestABackupRestoresOntoEitherStore(t *testing.T) {
	opens := map[string]func(testing.TB) store{"embedded": openEmbedded, "neo4j": openNeo4j}
	for _, from := range []string{"embedded", "neo4j"} {
		for _, to := range []string{"embedded", "neo4j"} {
			t.Run(from+"-to-"+to, func(t *testing.T) {
				org := testenv.NewOrg()
				src := opens[from](t)
				if from == "neo4j" {
					forget(t, org)
				}
				op := populate(t, src, org)

				var file bytes.Buffer
				end, err := backup.Write(ctx, &file, backup.Manifest{Release: "test", Store: src.kind, Organization: org}, src.source(org))
				require.NoError(t, err)
				require.Equal(t, int64(2), end.Kinds[capstan.BackupSecret], "a record per secret, with its replaced values")
				for _, kind := range capstan.BackupKinds {
					require.Positive(t, end.Kinds[kind], "the backup holds a %s", kind)
				}
				sum, err := backup.Verify(ctx, bytes.NewReader(file.Bytes()))
				require.NoError(t, err)
				require.Equal(t, org, sum.Manifest.Organization)
				require.Len(t, sum.Secrets, 2)
				for _, rec := range sum.Secrets {
					require.NoError(t, secret.OpensRecord(key, org, rec.Key, rec.Data))
					require.Equal(t, capstan.EINVALID, capstan.ErrorCode(secret.OpensRecord(bytes.Repeat([]byte{8}, secret.KeySize), org, rec.Key, rec.Data)))
					require.Equal(t, capstan.EINVALID, capstan.ErrorCode(secret.OpensRecord(key, "another-org", rec.Key, rec.Data)), "sealed for its organization")
				}

				dst := opens[to](t)
				if to == "neo4j" {
					forget(t, org)
				}
				if to == from && to == "neo4j" {
					// One database: the organization is there already.
					_, err := backup.Load(ctx, bytes.NewReader(file.Bytes()), dst.target())
					require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
					return
				}
				_, err = backup.Load(ctx, bytes.NewReader(file.Bytes()), dst.target())
				require.NoError(t, err)
				require.Equal(t, records(t, src, org), records(t, dst, org), "the restored organization is the backed-up one")
				sameReads(t, src, dst, org, op)
				takesItsNextStep(t, dst, org, op.ID)

				_, err = backup.Load(ctx, bytes.NewReader(file.Bytes()), dst.target())
				require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "a store that holds the organization is refused: %v", err)
			})
		}
	}
}

// sameReads compares what the API reads through derived indexes.
func sameReads(t *testing.T, a, b store, org string, op *capstan.Operation) {
	for _, s := range []store{a, b} {
		got, err := s.GetOperationByKey(ctx, org, "backup-key")
		require.NoError(t, err, s.kind)
		require.Equal(t, op.ID, got.ID)
		list, total, err := s.ListOperations(ctx, org, capstan.OperationFilter{AwaitingPatch: true})
		require.NoError(t, err, s.kind)
		require.Equal(t, 1, total, s.kind)
		require.Equal(t, op.ID, list[0].ID)
		_, total, err = s.ListOperations(ctx, org, capstan.OperationFilter{ResourceKey: "tempo.instance/prod-tempo"})
		require.NoError(t, err)
		require.Equal(t, 1, total, s.kind)
		unfinished, err := s.UnfinishedOperations(ctx)
		require.NoError(t, err)
		require.Contains(t, unfinished, capstan.OperationRef{OrganizationID: org, ID: op.ID}, s.kind)
		patches, err := s.ListPlanPatches(ctx, org, op.ID)
		require.NoError(t, err)
		require.Len(t, patches, 1, s.kind)
		values, err := s.secrets.Values(ctx, org)
		require.NoError(t, err, s.kind)
		require.Len(t, values, 3, "%s: the current values and the replaced one, still masked", s.kind)
		v, err := s.secrets.Get(ctx, org, "registry-token")
		require.NoError(t, err)
		require.Equal(t, "second-value-of-the-token", string(v))
	}
	cand := func(s store) []string {
		res, err := s.FindCandidates(ctx, org, capstan.CandidateQuery{Capability: "object_storage.s3", MaxRejected: -1, MaxPassing: -1})
		require.NoError(t, err, s.kind)
		var out []string
		for _, c := range res.Candidates {
			out = append(out, fmt.Sprintf("%s %v %v %v", c.Resource.Key(), c.Passed(), c.Via, c.Failed))
		}
		return out
	}
	require.NotEmpty(t, cand(a))
	require.Equal(t, cand(a), cand(b), "candidates come from the rebuilt profiles")
	deps := func(s store) []string {
		r, err := s.GetResourceByKey(ctx, org, "compute.node/prod-worker-3")
		require.NoError(t, err, s.kind)
		out := []string{}
		for _, dir := range []capstan.Direction{capstan.Outgoing, capstan.Incoming} {
			ds, err := s.Dependencies(ctx, org, r.ID, dir, 3, capstan.MaxWalkResources)
			require.NoError(t, err, s.kind)
			for _, d := range ds {
				out = append(out, fmt.Sprintf("%v %s %d", dir, d.Resource.Key(), d.Depth))
			}
		}
		slices.Sort(out)
		return out
	}
	require.NotEmpty(t, deps(a))
	require.Equal(t, deps(a), deps(b), "relationships are relinked")
	plans, err := a.ListPlans(ctx, org, op.IntentID)
	require.NoError(t, err)
	for _, p := range plans {
		for _, bd := range p.Bindings {
			if bd.Provider == nil {
				continue
			}
			pa, err := a.ListProviderBindings(ctx, org, bd.Provider.ResourceID, 10)
			require.NoError(t, err)
			pb, err := b.ListProviderBindings(ctx, org, bd.Provider.ResourceID, 10)
			require.NoError(t, err)
			require.Equal(t, pa, pb, "bindings by provider")
		}
	}
}

// takesItsNextStep writes a step of the restored operation: its version
// and last sequence are where the backup left them.
func takesItsNextStep(t *testing.T, s store, org, id string) {
	op, err := s.GetOperation(ctx, org, id)
	require.NoError(t, err)
	before, err := s.ListEvents(ctx, org, id, 0, 1000)
	require.NoError(t, err)
	ch := &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{{Type: "operation.resumed", Actor: "executor"}}}
	require.NoError(t, s.ApplyOperationChange(ctx, org, ch))
	require.Equal(t, before[len(before)-1].Sequence+1, ch.Events[0].Sequence, "the timeline goes on without a gap")
}

// TestADamagedBackupIsRefusedBeforeAnyWrite cuts, flips and pads a backup:
// each is INVALID, and the store is left without the organization.
func TestADamagedBackupIsRefusedBeforeAnyWrite(t *testing.T) {
	src := openEmbedded(t)
	org := testenv.NewOrg()
	populate(t, src, org)
	var file bytes.Buffer
	_, err := backup.Write(ctx, &file, backup.Manifest{Store: "embedded", Organization: org}, src.source(org))
	require.NoError(t, err)
	plain := gunzip(t, file.Bytes())

	damaged := map[string][]byte{
		"cut short":        regzip(t, plain[:len(plain)/2]),
		"no end line":      regzip(t, plain[:bytes.LastIndexByte(plain[:len(plain)-1], '\n')+1]),
		"a record changed": regzip(t, bytes.Replace(plain, []byte("prod-worker-3"), []byte("prod-worker-9"), 1)),
		"more after end":   regzip(t, append(slices.Clone(plain), []byte(`{"kind":"resource","data":{}}`+"\n")...)),
		"not gzip":         plain,
		"empty":            nil,
		"another format":   regzip(t, []byte(`{"manifest":{"format":"capstan-backup/99"}}`+"\n")),
	}
	for name, data := range damaged {
		t.Run(name, func(t *testing.T) {
			_, err := backup.Verify(ctx, bytes.NewReader(data))
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
			dst := openEmbedded(t)
			_, err = backup.Load(ctx, bytes.NewReader(data), dst.target())
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
			requireNothingOf(t, dst, org)
		})
	}
}

// TestAFailedRestoreRemovesWhatItWrote loads a backup that passes every
// check of the file but that no store can hold (two operations started
// with one idempotency key, at its end): the batches written before it
// are removed, on both stores.
func TestAFailedRestoreRemovesWhatItWrote(t *testing.T) {
	src := openEmbedded(t)
	org := testenv.NewOrg()
	op := populate(t, src, org)
	var file bytes.Buffer
	_, err := backup.Write(ctx, &file, backup.Manifest{Store: "embedded", Organization: org}, func(ctx context.Context, emit func(capstan.BackupRecord) error) error {
		if err := src.source(org)(ctx, emit); err != nil {
			return err
		}
		twin := *op
		twin.ID = capstan.NewID()
		data, err := json.Marshal(&twin)
		require.NoError(t, err)
		return emit(capstan.BackupRecord{Kind: capstan.BackupOperation, Data: data})
	})
	require.NoError(t, err)
	for name, open := range map[string]func(testing.TB) store{"embedded": openEmbedded, "neo4j": openNeo4j} {
		t.Run(name, func(t *testing.T) {
			dst := open(t)
			if name == "neo4j" {
				forget(t, org)
			}
			_, err := backup.Load(ctx, bytes.NewReader(file.Bytes()), dst.target())
			require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
			requireNothingOf(t, dst, org)
		})
	}
}

// TestACraftedBackupIsRefused writes files whose checksums hold but whose
// records break the backup's rules: each is INVALID on reading, before
// a store sees it.
func TestACraftedBackupIsRefused(t *testing.T) {
	src := openEmbedded(t)
	org := testenv.NewOrg()
	op := populate(t, src, org)
	plus := func(extra ...capstan.BackupRecord) []byte {
		var file bytes.Buffer
		_, err := backup.Write(ctx, &file, backup.Manifest{Store: "embedded", Organization: org}, func(ctx context.Context, emit func(capstan.BackupRecord) error) error {
			if err := src.source(org)(ctx, emit); err != nil {
				return err
			}
			for _, r := range extra {
				if err := emit(r); err != nil {
					return err
				}
			}
			return nil
		})
		require.Error(t, err, "Write refuses what it cannot restore")
		// Write it anyway, by hand: the checksum holds.
		var body bytes.Buffer
		sum := sha256Writer()
		lines := [][]byte{}
		add := func(v any) {
			data, err := json.Marshal(v)
			require.NoError(t, err)
			lines = append(lines, data)
		}
		add(map[string]any{"manifest": backup.Manifest{Format: backup.Format, Store: "embedded", Organization: org}})
		kinds := map[string]int64{}
		n := int64(0)
		require.NoError(t, src.source(org)(ctx, func(r capstan.BackupRecord) error {
			add(r)
			kinds[r.Kind]++
			n++
			return nil
		}))
		for _, r := range extra {
			add(r)
			kinds[r.Kind]++
			n++
		}
		for _, l := range lines {
			body.Write(l)
			body.WriteByte('\n')
			sum.Write(l)
			sum.Write([]byte{'\n'})
		}
		add(map[string]any{"end": backup.End{Records: n, Kinds: kinds, SHA256: sum.hex()}})
		body.Write(lines[len(lines)-1])
		body.WriteByte('\n')
		return regzip(t, body.Bytes())
	}
	foreign := *op
	foreign.ID, foreign.OrganizationID = capstan.NewID(), "victim"
	foreignData, _ := json.Marshal(&foreign)
	orphan := *op
	orphan.ID, orphan.PlanID, orphan.IdempotencyKey = capstan.NewID(), "no-such-plan", "" // its plan is what is wrong
	orphanData, _ := json.Marshal(&orphan)
	cases := map[string]capstan.BackupRecord{
		"another organization's operation": {Kind: capstan.BackupOperation, Data: foreignData},
		"an operation of a missing plan":   {Kind: capstan.BackupOperation, Data: orphanData},
		"an event of another operation":    {Kind: capstan.BackupEvent, Operation: op.ID, Key: "99", Data: json.RawMessage(`{"operation_id":"other","sequence":99}`)},
		"an event of a missing operation":  {Kind: capstan.BackupEvent, Operation: "nope", Key: "1", Data: json.RawMessage(`{"operation_id":"nope","sequence":1}`)},
		"an unknown kind":                  {Kind: "strange", Data: json.RawMessage(`{}`)},
		"a resource twice":                 {Kind: capstan.BackupResource, Data: resourceJSON(t, src, org, "compute.node/prod-worker-3")},
	}
	for name, extra := range cases {
		t.Run(name, func(t *testing.T) {
			data := plus(extra)
			_, err := backup.Verify(ctx, bytes.NewReader(data))
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
			dst := openEmbedded(t)
			_, err = backup.Load(ctx, bytes.NewReader(data), dst.target())
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
			requireNothingOf(t, dst, org)
		})
	}
}

func resourceJSON(t *testing.T, s store, org, key string) json.RawMessage {
	r, err := s.GetResourceByKey(ctx, org, key)
	require.NoError(t, err)
	data, err := json.Marshal(r)
	require.NoError(t, err)
	return data
}

// requireNothingOf checks that s holds nothing of org: a restore may
// begin.
func requireNothingOf(t *testing.T, s store, org string) {
	t.Helper()
	rs, err := s.Store.(capstan.Restorer).BeginRestore(ctx, org)
	require.NoError(t, err, "the store holds nothing of the organization")
	require.NoError(t, rs.Abort(ctx))
	_, total, err := s.ListResources(ctx, org, capstan.ResourceFilter{})
	require.NoError(t, err)
	require.Zero(t, total)
	if s.file != nil {
		require.Empty(t, s.file.Sealed(org))
	}
}

func gunzip(t *testing.T, data []byte) []byte {
	var out bytes.Buffer
	require.NoError(t, backupGunzip(&out, data))
	return out.Bytes()
}

func regzip(t *testing.T, data []byte) []byte {
	var out bytes.Buffer
	require.NoError(t, backupGzip(&out, data))
	return out.Bytes()
}

// TestRestoredOperationsWaitForFinish: on Neo4j, replicas may be serving
// other organizations while one is restored. Until Finish, none of its
// operations is unfinished to an executor (none is resumed half
// restored); after it, the running one is.
func TestRestoredOperationsWaitForFinish(t *testing.T) {
	src := openEmbedded(t)
	org := testenv.NewOrg()
	op := populate(t, src, org)
	var recs []capstan.BackupRecord
	require.NoError(t, src.source(org)(ctx, func(r capstan.BackupRecord) error {
		if r.Kind != capstan.BackupSecret {
			recs = append(recs, r)
		}
		return nil
	}))
	dst := openNeo4j(t)
	forget(t, org)
	rs, err := dst.Store.(capstan.Restorer).BeginRestore(ctx, org)
	require.NoError(t, err)
	require.NoError(t, rs.Write(ctx, recs))
	ref := capstan.OperationRef{OrganizationID: org, ID: op.ID}
	unfinished, err := dst.UnfinishedOperations(ctx)
	require.NoError(t, err)
	require.NotContains(t, unfinished, ref, "written, not yet whole")
	require.NoError(t, rs.Finish(ctx))
	unfinished, err = dst.UnfinishedOperations(ctx)
	require.NoError(t, err)
	require.Contains(t, unfinished, ref)
}

// TestTheReadersLimitsHold pushes past a line's bound and the secrets'
// bound: each is INVALID, read without holding the file in memory.
func TestTheReadersLimitsHold(t *testing.T) {
	org := testenv.NewOrg()
	manifest, err := json.Marshal(map[string]any{"manifest": backup.Manifest{Format: backup.Format, Organization: org}})
	require.NoError(t, err)
	noise := make([]byte, backup.MaxLine*3/4+1)
	_, _ = rand.Read(noise) // incompressible: the line's bound is met before the inflation bound
	long := append(append([]byte(`{"kind":"intent","data":{"id":"`), base64.RawURLEncoding.AppendEncode(nil, noise)...), []byte("\"}}\n")...)
	data := regzip(t, append(append(manifest, '\n'), long...))
	_, err = backup.Verify(ctx, bytes.NewReader(data))
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "longer than")

	var many bytes.Buffer
	many.Write(append(manifest, '\n'))
	for i := range backup.MaxSecrets + 1 {
		fmt.Fprintf(&many, `{"kind":"secret","key":"s-%d","data":[]}`+"\n", i)
	}
	_, err = backup.Verify(ctx, bytes.NewReader(regzip(t, many.Bytes())))
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "more than")
}

// TestABackupIsOneBoundedGzipStream: a file of many gzip members (read
// whole, it cost a minute of CPU) is refused at the end of the first; a
// stream that inflates past MaxRatio times its size (a gzip bomb) is
// refused as soon as it does, not read to its end; a record that says no
// organization is refused.
func TestABackupIsOneBoundedGzipStream(t *testing.T) {
	org := testenv.NewOrg()
	manifest, err := json.Marshal(map[string]any{"manifest": backup.Manifest{Format: backup.Format, Organization: org}})
	require.NoError(t, err)

	var members bytes.Buffer
	_, err = backup.Write(ctx, &members, backup.Manifest{Organization: org}, func(context.Context, func(capstan.BackupRecord) error) error { return nil })
	require.NoError(t, err)
	_, err = backup.Verify(ctx, bytes.NewReader(members.Bytes()))
	require.NoError(t, err, "a whole empty backup")
	one := regzip(t, append(append([]byte(nil), manifest...), '\n'))
	for range 1000 {
		members.Write(one)
	}
	_, err = backup.Verify(ctx, bytes.NewReader(members.Bytes()))
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "a backup is one gzip stream")

	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, err = zw.Write(append(manifest, '\n'))
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for range 96 { // 96 MiB of blanks, about 100 KiB compressed: past the 64 MiB floor at about 1,000×
		_, err = zw.Write(zeros)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	_, err = backup.Verify(ctx, bytes.NewReader(bomb.Bytes()))
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "inflates to more than")

	orphan := []byte(`{"kind":"intent","key":"i1","data":{"id":"i1","organization_id":""}}`)
	_, err = backup.Verify(ctx, bytes.NewReader(regzip(t, append(append(manifest, '\n'), append(orphan, '\n')...))))
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	require.Contains(t, err.Error(), "without an organization")
}

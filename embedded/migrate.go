package embedded

import (
	"bytes"
	"encoding/binary"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/capstan-dev/capstan"
)

// bMeta holds the store's own facts: its schema level.
var (
	bMeta         = []byte("meta")
	metaSchemaKey = []byte("schema_level")
)

type migration struct {
	capstan.Migration
	run func(tx *bolt.Tx) error
}

// migrations are the embedded store's, in order; a new one goes at the
// end with the next level, and is never changed once released.
var migrations = []migration{
	{capstan.Migration{Level: 1, Name: "buckets", Does: "creates every bucket the store keeps (resources, packs, intents, plans, operations, their records, events and indexes)"},
		createBuckets},
	{capstan.Migration{Level: 2, Name: "provider-index", Does: "indexes every plan's bindings by provider (provider_bindings, plan_providers): what depends on a resource through plans, without reading every plan"},
		func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bProviderBindings, bPlanProviders} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			return buildProviderIndex(tx)
		}},
	{capstan.Migration{Level: 3, Name: "operation-versions", Does: "records every operation's version and creation time apart (op_versions), so a step checks them without decoding the operation"},
		fillOperationVersions},
	{capstan.Migration{Level: stepLogLevel, Name: "step-log", Does: "starts the step log (steps.log) beside the database: from here an operation's step is durable once appended to it, and the database is synced at checkpoints; a directory at this level without the log is refused"},
		func(*bolt.Tx) error { return nil }}, // Open starts the log once the migrations ran
}

// stepLogLevel is the level from which a data directory has a step log.
const stepLogLevel = 4

// Migrations lists the embedded store's migrations.
func Migrations() []capstan.Migration {
	out := make([]capstan.Migration, len(migrations))
	for i, m := range migrations {
		out[i] = m.Migration
	}
	return out
}

// level1Buckets are the buckets of the first release, as they were: a
// bucket added later comes with a migration of its own.
var level1Buckets = []string{"resources", "resource_keys", "provides", "incoming", "packs", "capabilities",
	"resource_types", "scenarios", "policies", "intents", "plans", "intent_plans", "operations", "operation_keys",
	"active_ops", "op_records", "events", "plan_revisions", "plan_patches", "op_patches", "op_versions"}

func createBuckets(tx *bolt.Tx) error {
	for _, b := range level1Buckets {
		if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
			return err
		}
	}
	return nil
}

// fillOperationVersions writes op_versions for operations stored before
// it (a step still falls back to the operation when one is missing).
func fillOperationVersions(tx *bolt.Tx) error {
	versions := tx.Bucket(bOpVersions)
	return tx.Bucket(bOperations).ForEach(func(k, v []byte) error {
		if versions.Get(k) != nil {
			return nil
		}
		var m capstan.Meta
		if err := json.Unmarshal(v, &m); err != nil {
			return err
		}
		org, _, _ := bytes.Cut(k, []byte{0})
		return putVersion(rawWriter(tx), string(org), m)
	})
}

// schemaLevel is the level recorded in tx (0: none, a database from
// before levels were recorded).
func schemaLevel(tx *bolt.Tx) int {
	b := tx.Bucket(bMeta)
	if b == nil {
		return 0
	}
	v := b.Get(metaSchemaKey)
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

// migrate runs the migrations above the recorded level, each in its own
// transaction with the level it reaches.
func migrate(db *bolt.DB) error {
	var level int
	if err := db.View(func(tx *bolt.Tx) error { level = schemaLevel(tx); return nil }); err != nil {
		return err
	}
	if err := capstan.CheckSchemaLevel("embedded", level, Migrations()); err != nil {
		return err
	}
	for _, m := range migrations[level:] {
		err := db.Update(func(tx *bolt.Tx) error {
			if err := m.run(tx); err != nil {
				return err
			}
			meta, err := tx.CreateBucketIfNotExists(bMeta)
			if err != nil {
				return err
			}
			v := make([]byte, 8)
			binary.BigEndian.PutUint64(v, uint64(m.Level))
			return meta.Put(metaSchemaKey, v)
		})
		if err != nil {
			return capstan.Errorf(capstan.EINTERNAL, "embedded store migration %d (%s): %v", m.Level, m.Name, err)
		}
	}
	return nil
}

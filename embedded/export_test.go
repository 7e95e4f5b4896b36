package embedded

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// SetSchemaLevel records level as the store's schema level (0: none, as
// in a database from before levels were recorded).
func SetSchemaLevel(s *Store, level int) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if level == 0 {
			return tx.DeleteBucket(bMeta)
		}
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(level))
		return tx.Bucket(bMeta).Put(metaSchemaKey, v)
	})
}

// DropOperationVersions removes op_versions' entries, as in a database
// written before them.
func DropOperationVersions(s *Store) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bOpVersions); err != nil {
			return err
		}
		_, err := tx.CreateBucket(bOpVersions)
		return err
	})
}

// DamageOperation overwrites an operation's stored record with bytes that
// are not JSON, for tests of what reads it.
func DamageOperation(s *Store, org, id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bOperations).Put(key(org, id), []byte("{damaged"))
	})
}

// DropProviderIndex removes the provider index, as in a database written
// before it existed (at schema level 1).
func DropProviderIndex(s *Store) error {
	if err := SetSchemaLevel(s, 1); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bProviderBindings); err != nil {
			return err
		}
		return tx.DeleteBucket(bPlanProviders)
	})
}

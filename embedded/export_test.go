package embedded

import (
	bolt "go.etcd.io/bbolt"
)

// DamageOperation overwrites an operation's stored record with bytes that
// are not JSON, for tests of what reads it.
func DamageOperation(s *Store, org, id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bOperations).Put(key(org, id), []byte("{damaged"))
	})
}

// DropProviderIndex removes the provider index, as in a database written
// before it existed.
func DropProviderIndex(s *Store) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bProviderBindings); err != nil {
			return err
		}
		return tx.DeleteBucket(bPlanProviders)
	})
}

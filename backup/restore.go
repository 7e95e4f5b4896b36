package backup

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/capstan-dev/capstan"
)

// SecretSink keeps secret records where the store does not: the embedded
// store's secret file. Each record is a secret's sealed values, newest
// first, still sealed.
type SecretSink interface {
	// CheckRestore refuses an organization that has secrets already.
	CheckRestore(ctx context.Context, org string) error
	// PutSealed stores an organization's records, by name, in one write.
	PutSealed(ctx context.Context, org string, records map[string]json.RawMessage) error
}

// Target is where a backup is restored.
type Target struct {
	Store capstan.Restorer
	// Secrets, when set, takes the secret records (the store keeps them
	// otherwise).
	Secrets SecretSink
	// BatchRecords and BatchBytes bound one write (defaults: 1,000
	// records, 4 MiB).
	BatchRecords, BatchBytes int
}

// Load reads a backup from r into t: the organization must not be in
// the store. Every record is written as it was; a failure, or a file
// whose end line does not match what was read, aborts the restore and
// removes what it wrote. Verify the file first: Load checks it too, but
// only as it goes.
func Load(ctx context.Context, r io.Reader, t Target) (Summary, error) {
	if t.BatchRecords <= 0 {
		t.BatchRecords = 1000
	}
	if t.BatchBytes <= 0 {
		t.BatchBytes = 4 << 20
	}
	var (
		s       Summary
		rs      capstan.Restoration
		batch   []capstan.BackupRecord
		size    int
		secrets = map[string]json.RawMessage{}
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := rs.Write(ctx, batch)
		batch, size = batch[:0], 0
		return err
	}
	begin := func() (err error) {
		if t.Secrets != nil {
			if err := t.Secrets.CheckRestore(ctx, s.Manifest.Organization); err != nil {
				return err
			}
		}
		rs, err = t.Store.BeginRestore(ctx, s.Manifest.Organization)
		return err
	}
	err := read(ctx, r, &s, func(rec capstan.BackupRecord) error {
		if rs == nil {
			if err := begin(); err != nil {
				return err
			}
		}
		if rec.Kind == capstan.BackupSecret && t.Secrets != nil {
			secrets[rec.Key] = rec.Data
			return nil
		}
		batch = append(batch, rec)
		size += len(rec.Data)
		if len(batch) >= t.BatchRecords || size >= t.BatchBytes {
			return flush()
		}
		return nil
	})
	if err == nil && rs == nil { // an organization with nothing in it
		if err := begin(); err != nil {
			return s, err
		}
	}
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = rs.Finish(ctx)
	}
	if err == nil && len(secrets) > 0 {
		err = t.Secrets.PutSealed(ctx, s.Manifest.Organization, secrets)
	}
	if err != nil && rs != nil {
		// The abort must run even when ctx ended.
		if aerr := rs.Abort(context.WithoutCancel(ctx)); aerr != nil {
			err = errors.Join(err, aerr)
		}
	}
	return s, err
}

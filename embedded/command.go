package embedded

import (
	"context"

	"github.com/capstan-dev/capstan"
)

// RecordCommand stores a pending command for the operation's owner (this
// process's executor, woken by the service): the operation itself is not
// written.
func (s *Store) RecordCommand(ctx context.Context, org, opID string, c *capstan.Command) error {
	data, err := capstan.CheckCommand(org, opID, c)
	if err != nil {
		return err
	}
	return s.update(ctx, "embedded.RecordCommand", func(w *writer) error {
		tx := w.tx
		if tx.Bucket(bOperations).Get(key(org, opID)) == nil {
			return capstan.NotFound("operation", opID)
		}
		if tx.Bucket(bActiveOps).Get(key(org, opID)) == nil {
			return capstan.Ended(opID) // its last step and this are one after the other: its loop's last read came after
		}
		k := key(org, opID, capstan.RecordCommand, c.ID)
		if tx.Bucket(bOpRecords).Get(k) != nil {
			return capstan.Errorf(capstan.ECONFLICT, "command %s is recorded already", c.ID)
		}
		return w.put(bOpRecords, k, data)
	})
}

// GetCommand returns a command of an operation.
func (s *Store) GetCommand(ctx context.Context, org, opID, id string) (*capstan.Command, error) {
	var c capstan.Command
	err := s.view(ctx, "embedded.GetCommand", func(tx *rtx) error {
		ok, err := getJSON(tx.Bucket(bOpRecords), key(org, opID, capstan.RecordCommand, id), &c)
		if err == nil && !ok {
			err = capstan.NotFound("command", id)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

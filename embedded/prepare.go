package embedded

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/capstan-dev/capstan"
)

// An operation's step is encoded before it joins a group commit
// (group.go), by the goroutine that makes it: the leader's transaction,
// which every step of the batch waits for, then only checks the version
// and puts bytes. Encoding inside it made the transaction serial work of
// ~100 µs per step.

// preparedStep is a step's writes, encoded.
type preparedStep struct {
	meta    capstan.Meta // the operation's, as the step writes it
	opJSON  []byte
	records *capstan.OperationChange // stamped copies of ch's records
	rows    []capstan.RecordRow      // their kinds, keys (after org, op id) and JSON
	events  []preparedEvent
}

// preparedEvent is an event's JSON around its sequence, which only the
// transaction knows: head + sequence + tail.
type preparedEvent struct {
	event      capstan.OperationEvent
	head, tail []byte
}

// prepareStep encodes ch's writes for an operation at op.Version; the
// transaction checks that version before it puts them.
func (s *Store) prepareStep(org string, ch *capstan.OperationChange) (*preparedStep, error) {
	op := ch.Operation
	p := &preparedStep{meta: op.Meta}
	s.touch(&p.meta, org, false)
	o2 := *op
	o2.Meta = p.meta
	var err error
	if p.opJSON, err = json.Marshal(&o2); err != nil {
		return nil, err
	}
	p.records = ch.StampedRecords(org, s.now())
	if p.rows, err = p.records.RecordRows(); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	for _, e := range ch.Events {
		e.OperationID, e.Sequence = op.ID, 0
		if e.At.IsZero() {
			e.At = now
		}
		data, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		mark := []byte(`"sequence":0`)
		i := bytes.Index(data, mark)
		if i < 0 {
			return nil, fmt.Errorf("event encoding without a sequence: %s", data)
		}
		p.events = append(p.events, preparedEvent{event: e, head: data[:i+len(mark)-1], tail: data[i+len(mark):]})
	}
	return p, nil
}

// storedVersion is the operation's version and creation time as stored:
// from the versions bucket (no decoding), or, for an operation written
// before it, from the operation itself.
func storedVersion(tx *rtx, org, opID string) (int64, time.Time, bool, error) {
	k := key(org, opID)
	if v := tx.Bucket(bOpVersions).Get(k); len(v) == 16 {
		return int64(binary.BigEndian.Uint64(v)), time.Unix(0, int64(binary.BigEndian.Uint64(v[8:]))).UTC(), true, nil
	}
	var stored capstan.Operation
	ok, err := getJSON(tx.Bucket(bOperations), k, &stored)
	return stored.Version, stored.CreatedAt, ok, err
}

// putVersion records the operation's version and creation time for the
// next step's check.
func putVersion(w *writer, org string, m capstan.Meta) error {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, uint64(m.Version))
	binary.BigEndian.PutUint64(v[8:], uint64(m.CreatedAt.UnixNano()))
	return w.put(bOpVersions, key(org, m.ID), v)
}

// putPrepared writes a prepared step whose version was checked: the
// operation, its records and its events, which get their sequences here.
func (s *Store) putPrepared(w *writer, org string, op *capstan.Operation, p *preparedStep, o2 *capstan.Operation) ([]capstan.OperationEvent, error) {
	if err := s.putOperationJSON(w, org, o2, p.opJSON); err != nil {
		return nil, err
	}
	for _, r := range p.rows {
		if err := w.put(bOpRecords, key(org, op.ID, r.Kind, r.Key), r.JSON); err != nil {
			return nil, err
		}
	}
	last := lastSequence(w.tx.Bucket(bEvents), org, op.ID)
	out := make([]capstan.OperationEvent, len(p.events))
	for i, e := range p.events {
		last++
		data := make([]byte, 0, len(e.head)+20+len(e.tail))
		data = append(strconv.AppendInt(append(data, e.head...), last, 10), e.tail...)
		if err := w.put(bEvents, key(org, op.ID, seqKey(last)), data); err != nil {
			return nil, err
		}
		out[i] = e.event
		out[i].Sequence = last
	}
	return out, nil
}

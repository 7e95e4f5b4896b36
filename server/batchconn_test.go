package server

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recordingConn records each write the batchConn makes.
type recordingConn struct {
	net.Conn
	writes    [][]byte
	closed    bool
	deadlines []time.Time
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func (c *recordingConn) Close() error { c.closed = true; return nil }

func (c *recordingConn) SetWriteDeadline(t time.Time) error {
	c.deadlines = append(c.deadlines, t)
	return nil
}

func TestBatchConnSendsABatchInOneWrite(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}

	_, _ = b.Write([]byte("handshake"))
	require.Equal(t, [][]byte{[]byte("handshake")}, rec.writes, "outside a batch, writes go straight through")

	b.begin()
	_, _ = b.Write([]byte("one|"))
	_, _ = b.Write([]byte("two|"))
	_, _ = b.Write([]byte("three"))
	require.Len(t, rec.writes, 1, "a batch holds its frames")
	require.NoError(t, b.flush())
	require.Equal(t, []byte("one|two|three"), rec.writes[1])
	require.NoError(t, b.flush(), "an empty flush writes nothing")
	require.Len(t, rec.writes, 2)
}

func TestBatchConnWritesABatchThatGrowsTooLarge(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	b.begin()
	big := bytes.Repeat([]byte("x"), maxBatchBytes-10)
	_, _ = b.Write(big)
	_, _ = b.Write([]byte("0123456789abc")) // over the bound: written with what was held
	require.Len(t, rec.writes, 1)
	require.Len(t, rec.writes[0], maxBatchBytes+3)
	_, _ = b.Write([]byte("tail"))
	require.NoError(t, b.flush())
	require.Equal(t, []byte("tail"), rec.writes[1])
}

func TestBatchConnCloseSendsWhatIsHeld(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	b.begin()
	_, _ = b.Write([]byte("close frame"))
	require.NoError(t, b.Close())
	require.Equal(t, [][]byte{[]byte("close frame")}, rec.writes)
	require.True(t, rec.closed)
}

func TestBatchConnAppliesAWriteDeadlineOncePerBatch(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	first := time.Unix(100, 0)
	require.NoError(t, b.SetWriteDeadline(first))
	require.Equal(t, []time.Time{first}, rec.deadlines, "outside a batch, straight through")

	b.begin()
	for i := range 3 { // gorilla sets the deadline before every frame
		require.NoError(t, b.SetWriteDeadline(first.Add(time.Duration(i+1)*time.Second)))
		_, _ = b.Write([]byte("frame"))
	}
	require.Len(t, rec.deadlines, 1, "held while batching")
	require.NoError(t, b.flush())
	require.Equal(t, []time.Time{first, first.Add(3 * time.Second)}, rec.deadlines, "the last one, once, before the batch's write")
	require.NoError(t, b.flush())
	require.Len(t, rec.deadlines, 2)
}

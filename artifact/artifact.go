// Package artifact keeps the bytes of operations' artifacts where the
// replicas that run them can read them: a directory for one process (the
// embedded store), an S3-compatible object store for replicas on one
// Neo4j. An artifact's record (capstan.Artifact) holds its reference, its
// size and its SHA-256; every read checks the bytes against them.
//
// Secret artifacts never come here: their values are sealed in the secret
// store (AES-256-GCM under the key the replicas share), and their records
// refer to it (secret:<name>).
package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/capstan-dev/capstan"
)

// MaxSize bounds one artifact's bytes: a job that leaves a larger file
// gets failed evidence, not an artifact.
const MaxSize = 64 << 20

// A Store keeps artifacts' bytes under keys the executor chooses
// (Key) and gives back references to them. Put never leaves a partial
// object under its key; Open reads what one Put wrote.
type Store interface {
	// Put stores the size bytes r yields under key and returns the
	// object's reference.
	Put(ctx context.Context, key string, r io.Reader, size int64) (string, error)
	// Open reads the object ref names: all of it, or its [from, to)
	// part when to > 0 (ENOTFOUND when there is none; EINVALID for a
	// reference this store does not keep).
	Open(ctx context.Context, ref string, from, to int64) (io.ReadCloser, error)
	// Shared reports whether every replica reads what this store keeps.
	Shared() bool
}

// Object is what a Put kept: where, how large, its SHA-256 (hex).
type Object struct {
	Ref    string
	Size   int64
	SHA256 string
}

// Key is the key of an artifact a node's attempt kept: one object per
// attempt, so a late attempt (on an owner deposed since) never replaces
// the bytes the operation recorded.
func Key(opID, node string, attempt int, name string) string {
	return fmt.Sprintf("%s/%s/%d/%s", OperationPrefix(opID), clean(node), attempt, clean(name))
}

// OperationPrefix is the part of its artifacts' keys an operation's
// every artifact shares.
func OperationPrefix(opID string) string { return "operations/" + clean(opID) }

// clean keeps a key's segment to letters, digits, '.', '_' and '-'
// (never "." or ".." alone): node and artifact names are a pack's.
func clean(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			b[i] = '_'
		}
	}
	if s := string(b); s != "" && strings.Trim(s, ".") != "" {
		return s
	}
	return "_" + string(b)
}

// Put keeps size bytes of r (at most MaxSize; EINVALID past it) in s
// under key, and returns the object with its SHA-256. A reader that
// yields fewer or more bytes than size keeps nothing.
func Put(ctx context.Context, s Store, key string, r io.Reader, size int64) (Object, error) {
	if size > MaxSize {
		return Object{}, capstan.Errorf(capstan.EINVALID, "artifact %s has %d bytes: at most %d are kept", key, size, MaxSize)
	}
	sum := sha256.New()
	exact := &exactReader{r: io.TeeReader(r, sum), left: size}
	ref, err := s.Put(ctx, key, exact, size)
	if err == nil && exact.err != nil {
		err = exact.err
	}
	if err != nil {
		return Object{}, err
	}
	return Object{Ref: ref, Size: size, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}

// exactReader yields exactly left bytes of r, and fails a reader that
// yields fewer or more (a file that changed size while it was kept).
type exactReader struct {
	r    io.Reader
	left int64
	err  error
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		var one [1]byte
		if n, _ := e.r.Read(one[:]); n > 0 {
			e.err = capstan.Errorf(capstan.ECONFLICT, "the artifact's file grew while it was kept")
			return 0, e.err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		e.err = capstan.Errorf(capstan.ECONFLICT, "the artifact's file shrank while it was kept")
		return n, e.err
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// Read returns the bytes of a — at most limit of them, from its end,
// when limit > 0 (the tail: what an analyzer reads of a long log) —
// checked against its record when it is read whole: a kept artifact must
// have its size and SHA-256 (ECONFLICT otherwise: the store changed it).
// A part of a diagnostics log, and records kept before artifacts had
// digests, are read as they are.
func Read(ctx context.Context, s Store, a capstan.Artifact, limit int64) ([]byte, error) {
	ref, from, to, err := splitRange(a.StorageRef)
	if err != nil {
		return nil, err
	}
	if to > 0 && to == from {
		return nil, nil // an empty part
	}
	checked := a.SHA256 != "" && to == 0
	if checked && limit > 0 && a.Size > limit {
		from, to, checked = a.Size-limit, a.Size, false // the tail: the digest covers the whole
	}
	rc, err := s.Open(ctx, ref, from, to)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	bound := int64(MaxSize)
	if to > 0 {
		bound = to - from
	}
	data, err := io.ReadAll(io.LimitReader(rc, bound+1))
	if err != nil {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "reading artifact %s: %v", a.Name, err)
	}
	if int64(len(data)) > bound {
		return nil, capstan.Errorf(capstan.EINVALID, "artifact %s is larger than %d bytes", a.Name, bound)
	}
	if checked {
		if err := check(a, data); err != nil {
			return nil, err
		}
	}
	if limit > 0 && int64(len(data)) > limit {
		data = data[int64(len(data))-limit:]
	}
	return data, nil
}

// check compares kept bytes with their record.
func check(a capstan.Artifact, data []byte) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); int64(len(data)) != a.Size || got != a.SHA256 {
		return capstan.Errorf(capstan.ECONFLICT, "artifact %s was changed where it is kept: %d bytes of SHA-256 %s, recorded as %d bytes of %s",
			a.Name, len(data), got, a.Size, a.SHA256)
	}
	return nil
}

// splitRange parses a reference's #<from>-<to> suffix (a part of a
// diagnostics log; none: 0, 0).
func splitRange(ref string) (base string, from, to int64, err error) {
	base, part, ranged := strings.Cut(ref, "#")
	if !ranged {
		return base, 0, 0, nil
	}
	if part == "0-0" {
		return base, 0, 0, nil // an empty part: Read answers it without a read
	}
	var n int
	n, err = fmt.Sscanf(part, "%d-%d", &from, &to)
	if err != nil || n != 2 || from < 0 || to < from || to-from > MaxSize || fmt.Sprintf("%d-%d", from, to) != part {
		return "", 0, 0, capstan.Errorf(capstan.EINVALID, "artifact reference %q has a bad range", ref)
	}
	return base, from, to, nil
}

// ErrForeign is the cause of an Open of a reference another kind of
// store made.
var ErrForeign = errors.New("not this store's reference")

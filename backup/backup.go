// Package backup is Capstan's backup file: one organization's records
// (capstan.BackupRecord), written by either store and loaded into
// either, so a backup of the embedded store restores onto Neo4j.
//
// The file is a gzip stream of JSON lines, written as the dump goes
// (nothing is held in memory or on disk first):
//
//	{"manifest": {format, release, store, schema, organization, created_at}}
//	{"kind": ..., "data": ...}           one line per record, in dump order
//	{"end": {records, kinds, sha256}}    counts, and the sha256 of every line before it
//
// A file without its end line (a backup cut short), with a count or a
// checksum that does not match, or of another format is refused before
// anything is written.
package backup

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"time"

	"github.com/capstan-dev/capstan"
)

// Format names this file format; a reader refuses any other.
const Format = "capstan-backup/1"

// MaxLine bounds one line of a backup (one record: a plan of a large
// DAG, an operation's output tail).
const MaxLine = 64 << 20

// Manifest says what a backup is.
type Manifest struct {
	Format string `json:"format"`
	// Release is the build that wrote it (capstan version).
	Release string `json:"release"`
	// Store is the kind of store it was taken from: embedded or neo4j.
	Store string `json:"store"`
	// Schema is the store's migration level when it was taken.
	Schema       int       `json:"schema"`
	Organization string    `json:"organization"`
	CreatedAt    time.Time `json:"created_at"`
}

// End closes a backup: what it holds, and the checksum of every line
// before it.
type End struct {
	Records int64            `json:"records"`
	Kinds   map[string]int64 `json:"kinds"`
	SHA256  string           `json:"sha256"`
}

// line is one line of the file: exactly one of its fields is set.
type line struct {
	Manifest *Manifest `json:"manifest,omitempty"`
	End      *End      `json:"end,omitempty"`
	capstan.BackupRecord
}

// Source is what a backup reads: a function that emits the
// organization's records in dump order, in one snapshot.
type Source func(ctx context.Context, emit func(capstan.BackupRecord) error) error

// Write writes a backup of m.Organization from src to w and returns its
// end line.
func Write(ctx context.Context, w io.Writer, m Manifest, src Source) (End, error) {
	m.Format = Format
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now().UTC()
	}
	zw := gzip.NewWriter(w)
	sum := sha256.New()
	out := bufio.NewWriterSize(io.MultiWriter(zw, sum), 256<<10)
	end := End{Kinds: map[string]int64{}}
	writeLine := func(v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if len(data) >= MaxLine {
			return capstan.Errorf(capstan.EINVALID, "a record is larger than a backup line may be (%d bytes)", MaxLine)
		}
		if _, err := out.Write(append(data, '\n')); err != nil {
			return err
		}
		return nil
	}
	if err := writeLine(line{Manifest: &m}); err != nil {
		return End{}, err
	}
	check := newChecker(m.Organization)
	err := src(ctx, func(r capstan.BackupRecord) error {
		if err := check.add(r); err != nil {
			return capstan.Errorf(capstan.EINTERNAL, "the dump read a record it cannot restore: %v", err)
		}
		end.Records++
		end.Kinds[r.Kind]++
		return writeLine(line{BackupRecord: r})
	})
	if err != nil {
		return End{}, err
	}
	if err := check.done(); err != nil {
		return End{}, &capstan.Error{Code: capstan.EUNAVAILABLE, Op: "backup.Write", Err: fmt.Errorf("%w: %v", ErrTorn, err)}
	}
	if err := out.Flush(); err != nil {
		return End{}, err
	}
	end.SHA256 = hex.EncodeToString(sum.Sum(nil))
	data, err := json.Marshal(line{End: &end})
	if err != nil {
		return End{}, err
	}
	if _, err := zw.Write(append(data, '\n')); err != nil {
		return End{}, err
	}
	return end, zw.Close()
}

// ErrTorn is the cause of a dump that read a write half-way: something
// it refers to is missing. Neo4j's read transactions are read-committed,
// not snapshots; a dump that meets a concurrent write is taken again.
var ErrTorn = errors.New("the dump read a write half-way")

// Summary is what reading a whole backup found.
type Summary struct {
	Manifest Manifest
	End      End
	// Secrets are the backup's secret records (at most MaxSecrets): what
	// a restore tries its key on before writing anything.
	Secrets []capstan.BackupRecord
}

// Verify reads a whole backup and checks it: the format, every line, the
// counts and the checksum of its end line.
func Verify(ctx context.Context, r io.Reader) (Summary, error) {
	var s Summary
	err := read(ctx, r, &s, func(rec capstan.BackupRecord) error {
		if rec.Kind == capstan.BackupSecret {
			s.Secrets = append(s.Secrets, rec)
		}
		return nil
	})
	return s, err
}

// Each reads a whole backup, handing each record to fn in file order,
// and checks it as Verify does: a record handed over is not yet known
// to belong to a whole file until Each returns nil.
func Each(ctx context.Context, r io.Reader, fn func(capstan.BackupRecord) error) (Summary, error) {
	var s Summary
	err := read(ctx, r, &s, fn)
	return s, err
}

// read reads a backup from r, handing each record to fn, and checks its
// end line once every record is read.
func read(ctx context.Context, r io.Reader, s *Summary, fn func(capstan.BackupRecord) error) error {
	compressed := &counter{r: r}
	raw := bufio.NewReader(compressed)
	zr, err := gzip.NewReader(raw)
	if err != nil {
		return invalid("it is not a gzip stream: %v", err)
	}
	defer zr.Close()
	zr.Multistream(false) // a backup is one gzip stream: a second is refused, never read
	in := bufio.NewReaderSize(&inflated{r: zr, compressed: compressed}, 256<<10)
	if err := readLines(ctx, in, s, fn); err != nil {
		return err
	}
	if err := zr.Reset(raw); !errors.Is(err, io.EOF) {
		return invalid("there is more after its gzip stream: a backup is one gzip stream")
	}
	return nil
}

// MaxRatio and MinInflated bound what a backup may inflate to: at most
// MaxRatio times the compressed bytes read so far, once past MinInflated.
// Real backups (JSON lines) inflate 5 to 30 times; a file built to
// inflate far more (a gzip bomb, deflate's best is about 1,000 times) is
// refused as soon as it passes the bound, never read to its end.
const (
	MaxRatio    = 256
	MinInflated = 64 << 20
)

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// inflated reads the decompressed stream, refusing it once it passes
// MaxRatio times the compressed bytes read (after MinInflated).
type inflated struct {
	r          io.Reader
	compressed *counter
	n          int64
}

func (f *inflated) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.n += int64(n)
	if f.n > MinInflated && f.n > MaxRatio*f.compressed.n {
		return n, invalid("it inflates to more than %d times its size (%d bytes from %d): not a backup Capstan wrote", MaxRatio, f.n, f.compressed.n)
	}
	return n, err
}

// readLines reads the lines of a backup's one gzip stream, handing each
// record to fn, and checks its end line once every record is read.
func readLines(ctx context.Context, in *bufio.Reader, s *Summary, fn func(capstan.BackupRecord) error) error {
	sum := sha256.New()
	counted := End{Kinds: map[string]int64{}}
	var check *checker
	first := true
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return capstan.Errorf(capstan.EUNAVAILABLE, "backup read: %v", err)
		}
		data, err := readLine(in)
		if errors.Is(err, io.EOF) {
			return invalid("it ends at line %d without its end line: the backup was cut short", n)
		}
		if err != nil {
			return err
		}
		var l line
		if err := json.Unmarshal(data, &l); err != nil {
			return invalid("line %d is not JSON: %v", n, err)
		}
		switch {
		case first:
			if l.Manifest == nil || l.Manifest.Format != Format {
				return invalid("it does not start with a %s manifest", Format)
			}
			s.Manifest = *l.Manifest
			if !capstan.ValidKey(s.Manifest.Organization) {
				return invalid("its manifest names no valid organization")
			}
			check = newChecker(s.Manifest.Organization)
			first = false
		case l.End != nil:
			if err := checkEnd(in, sum, counted, *l.End, s); err != nil {
				return err
			}
			if err := check.done(); err != nil {
				return invalid("%v", err)
			}
			return nil
		default:
			if l.Kind == "" || len(l.Data) == 0 {
				return invalid("line %d is neither a record nor the end line", n)
			}
			if err := check.add(l.BackupRecord); err != nil {
				return invalid("line %d: %v", n, err)
			}
			counted.Records++
			counted.Kinds[l.Kind]++
			if err := fn(l.BackupRecord); err != nil {
				return err
			}
		}
		sum.Write(data)
		sum.Write([]byte{'\n'})
	}
}

func checkEnd(in *bufio.Reader, sum hash.Hash, counted, end End, s *Summary) error {
	if got := hex.EncodeToString(sum.Sum(nil)); got != end.SHA256 {
		return invalid("its checksum does not match: the file was changed or damaged (sha256 %s, the end line says %s)", got, end.SHA256)
	}
	if counted.Records != end.Records || !maps.Equal(counted.Kinds, end.Kinds) {
		return invalid("it holds %d records, its end line says %d", counted.Records, end.Records)
	}
	if _, err := in.ReadByte(); !errors.Is(err, io.EOF) {
		return invalid("there is more after its end line")
	}
	s.End = end
	return nil
}

// readLine reads one line without its newline, refusing one longer than
// MaxLine.
func readLine(in *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := in.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return nil, invalid("a line is longer than %d bytes", MaxLine)
		}
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return nil, invalid("its last line is cut short")
		case capstan.ErrorCode(err) != "":
			return nil, err // the inflation bound's own error
		default:
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, invalid("reading it: %v", err)
		}
	}
}

func invalid(format string, args ...any) error {
	return capstan.Errorf(capstan.EINVALID, "this is not a whole Capstan backup: "+format, args...)
}

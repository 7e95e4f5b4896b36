package artifact_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
	"github.com/capstan-dev/capstan/internal/s3test"
)

// stores are the stores under test, each with the file its object of
// key is kept in (to change it behind the store's back).
func stores(t *testing.T) map[string]struct {
	store artifact.Store
	file  func(key string) string
} {
	dir := t.TempDir()
	srv := s3test.Start(t)
	s3, err := artifact.OpenS3(context.Background(), artifact.S3Config{Endpoint: srv.Endpoint, Bucket: "artifacts",
		AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
	require.NoError(t, err)
	return map[string]struct {
		store artifact.Store
		file  func(key string) string
	}{
		"dir": {artifact.Dir{Root: dir}, func(key string) string { return filepath.Join(dir, key) }},
		"s3":  {s3, func(key string) string { return filepath.Join(srv.Root, "artifacts", key) }},
	}
}

// TestAStoreKeepsWhatItWasGivenAndNoticesAChange: on both stores, an
// artifact reads back whole, by its tail and by a part; the same key
// again is a new object whole (never half of one); bytes changed where
// they are kept, a missing object, another store's reference, one that
// leaves the directory, a reader that yields fewer bytes than promised,
// and an artifact past the bound are each a typed error.
func TestAStoreKeepsWhatItWasGivenAndNoticesAChange(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := st.store
			key := artifact.Key("op1", "make", 1, "report")
			data := []byte("line one\nline two\nthe end\n")
			obj, err := artifact.Put(ctx, s, key, bytes.NewReader(data), int64(len(data)))
			require.NoError(t, err)
			a := capstan.Artifact{Name: "report", StorageRef: obj.Ref, Size: obj.Size, SHA256: obj.SHA256}
			got, err := artifact.Read(ctx, s, a, 0)
			require.NoError(t, err)
			require.Equal(t, data, got)
			tail, err := artifact.Read(ctx, s, a, 8)
			require.NoError(t, err)
			require.Equal(t, "the end\n", string(tail))
			part, err := artifact.Read(ctx, s, capstan.Artifact{Name: "part", StorageRef: obj.Ref + "#5-8"}, 0)
			require.NoError(t, err)
			require.Equal(t, "one", string(part))

			again := []byte("a second attempt\n")
			obj2, err := artifact.Put(ctx, s, key, bytes.NewReader(again), int64(len(again)))
			require.NoError(t, err)
			_, err = artifact.Read(ctx, s, a, 0)
			require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "the first record no longer matches: %v", err)
			got, err = artifact.Read(ctx, s, capstan.Artifact{Name: "report", StorageRef: obj2.Ref, Size: obj2.Size, SHA256: obj2.SHA256}, 0)
			require.NoError(t, err)
			require.Equal(t, again, got)

			require.NoError(t, os.WriteFile(st.file(key), []byte("A second attempt\n"), 0o640)) // same size, changed behind the store's back
			_, err = artifact.Read(ctx, s, capstan.Artifact{Name: "report", StorageRef: obj2.Ref, Size: obj2.Size, SHA256: obj2.SHA256}, 0)
			require.Equal(t, capstan.ECONFLICT, capstan.ErrorCode(err), "%v", err)
			require.Contains(t, capstan.ErrorMessage(err), "was changed where it is kept")

			missing := strings.Replace(obj.Ref, "report", "nothing", 1)
			_, err = artifact.Read(ctx, s, capstan.Artifact{Name: "nothing", StorageRef: missing}, 0)
			require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "%v", err)

			for _, ref := range []string{"file:../../etc/passwd", "file:/etc/passwd", "s3://another-bucket/" + key, "secret:operations/x", "file:x#9-3", "file:x#1-2-3", "s3://artifacts/x#0-99999999999"} {
				_, err := artifact.Read(ctx, s, capstan.Artifact{Name: "bad", StorageRef: ref}, 0)
				if name == "dir" && strings.HasPrefix(ref, "s3://another") {
					require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%s: %v", ref, err)
					continue
				}
				require.Contains(t, []string{capstan.EINVALID, capstan.ENOTFOUND}, capstan.ErrorCode(err), "%s: %v", ref, err)
			}

			_, err = artifact.Put(ctx, s, artifact.Key("op1", "make", 2, "short"), strings.NewReader("short"), 10)
			require.Error(t, err, "a file that shrank while it was kept")
			_, err = artifact.Read(ctx, s, capstan.Artifact{Name: "short", StorageRef: strings.Replace(obj.Ref, "1/report", "2/short", 1)}, 0)
			require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "nothing of it is kept: %v", err)

			_, err = artifact.Put(ctx, s, artifact.Key("op1", "make", 3, "big"), io.LimitReader(zeros{}, artifact.MaxSize+1), artifact.MaxSize+1)
			require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
		})
	}
}

// zeros yields zero bytes forever.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestKeysStayInTheirPlace: a pack's node and artifact names make keys
// that name one object below the operation's, whatever they hold.
func TestKeysStayInTheirPlace(t *testing.T) {
	for _, c := range []struct{ node, name, want string }{
		{"make", "report", "operations/op/make/1/report"},
		{"..", "..", "operations/op/_../1/_.."},
		{"a/b", "../../x", "operations/op/a_b/1/.._.._x"},
		{"", "", "operations/op/_/1/_"},
		{"ünï", "r e", "operations/op/__n__/1/r_e"},
	} {
		got := artifact.Key("op", c.node, 1, c.name)
		require.Equal(t, c.want, got, "%q %q", c.node, c.name)
		require.True(t, filepath.IsLocal(got))
	}
}

// TestAStoreThatDoesNotAnswerIsUnavailable: a store that is down, or that
// refuses the credentials, says so at start.
func TestAStoreThatDoesNotAnswerIsUnavailable(t *testing.T) {
	ctx := context.Background()
	_, err := artifact.OpenS3(ctx, artifact.S3Config{Endpoint: "http://127.0.0.1:1", Bucket: "b", AccessKey: "a", SecretKey: "s"})
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err), "%v", err)
	srv := s3test.Start(t)
	_, err = artifact.OpenS3(ctx, artifact.S3Config{Endpoint: srv.Endpoint, Bucket: "bucket", AccessKey: s3test.AccessKey, SecretKey: "wrong"})
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%v", err)
	for _, bad := range []string{"", "ftp://x", "http://", "http://host/path"} {
		_, err = artifact.OpenS3(ctx, artifact.S3Config{Endpoint: bad, Bucket: "b", AccessKey: "a", SecretKey: "s"})
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err), "%q: %v", bad, err)
	}
}

package secret

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestFileStoreEncryptsAtRest(t *testing.T) {
	dir := t.TempDir()
	key, err := LoadKey("CAPSTAN_TEST_NO_SUCH_KEY", filepath.Join(dir, "secret.key"))
	require.NoError(t, err)
	info, err := os.Stat(filepath.Join(dir, "secret.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	path := filepath.Join(dir, "secrets.json")
	s, err := OpenFile(path, key)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Put(ctx, "acme", "registry-password", []byte("hunter2-hunter2")))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "hunter2")
	info, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	again, err := OpenFile(path, key)
	require.NoError(t, err)
	v, err := again.Get(ctx, "acme", "registry-password")
	require.NoError(t, err)
	require.Equal(t, "hunter2-hunter2", string(v))
	_, err = again.Get(ctx, "other", "registry-password")
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "organizations do not share secrets")

	wrong := bytes.Repeat([]byte{7}, KeySize)
	_, err = OpenFile(path, wrong)
	require.ErrorContains(t, err, "does not open with this key")

	// A value moved to another organization's place does not open.
	var f storeFile
	require.NoError(t, json.Unmarshal(raw, &f))
	f.Secrets["other"] = map[string]sealedSecret{"registry-password": f.Secrets["acme"]["registry-password"]}
	moved, _ := json.Marshal(f)
	require.NoError(t, os.WriteFile(path, moved, 0o600))
	_, err = OpenFile(path, key)
	require.Error(t, err)

	for _, bad := range []struct{ name, value string }{{"Bad Name", "long-enough-value"}, {"../escape", "long-enough-value"}, {"short", "2short"}} {
		require.Equal(t, capstan.EINVALID, capstan.ErrorCode(s.Put(ctx, "acme", bad.name, []byte(bad.value))), bad.name)
	}
}

func TestRedactorMasksEncodings(t *testing.T) {
	const secret = "s3cr3t/v@lue+with spaces&\"quotes\""
	r := NewRedactor([][]byte{[]byte(secret), []byte("tiny")})
	jsonEscaped, _ := json.Marshal(secret)
	outputs := []string{
		"password=" + secret + "\n",
		"curl -u admin:" + url.QueryEscape(secret),
		"/v1/" + url.PathEscape(secret),
		`{"password":` + string(jsonEscaped) + `}`,
		"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+secret)),
		"token=" + base64.RawURLEncoding.EncodeToString([]byte("xy"+secret+"z")),
		"hex " + strings.ToUpper(strings.TrimSpace(string(hexOf(secret)))),
	}
	for _, out := range outputs {
		masked := r.String(out)
		require.Contains(t, masked, Mask, out)
		require.NotContains(t, masked, "v@lue", out)
	}
	require.Equal(t, "tiny words stay", r.String("tiny words stay"), "values under the minimum are not masked")
	v := r.Value(map[string]any{"k": []any{"a " + secret, map[string]any{secret: 1}}}).(map[string]any)
	require.NotContains(t, toJSON(v), "v@lue")
}

func hexOf(s string) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(s))
	for _, c := range []byte(s) {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestLogsAreMasked(t *testing.T) {
	key := bytes.Repeat([]byte{1}, KeySize)
	s, err := OpenFile(filepath.Join(t.TempDir(), "s.json"), key)
	require.NoError(t, err)
	v := NewVault(s)
	require.NoError(t, v.Put(context.Background(), "acme", "db", []byte("correct-horse-battery")))
	var buf bytes.Buffer
	log := slog.New(NewLogHandler(slog.NewJSONHandler(&buf, nil), v))
	log.With("cfg", "pw=correct-horse-battery").Error("failed with correct-horse-battery", "err", os.ErrInvalid, "detail", "correct-horse-battery",
		slog.Group("g", "x", "correct-horse-battery"), "any", map[string]any{"p": "correct-horse-battery"})
	require.NotContains(t, buf.String(), "correct-horse")
	require.Contains(t, buf.String(), Mask)
}

func TestReplacedValuesStayMasked(t *testing.T) {
	s, err := OpenFile(filepath.Join(t.TempDir(), "s.json"), bytes.Repeat([]byte{2}, KeySize))
	require.NoError(t, err)
	v := NewVault(s)
	ctx := context.Background()
	require.NoError(t, v.Put(ctx, "acme", "db", []byte("first-password-1")))
	require.NoError(t, v.Put(ctx, "acme", "db", []byte("second-password-2")))
	got, err := v.Get(ctx, "acme", "db")
	require.NoError(t, err)
	require.Equal(t, "second-password-2", string(got))
	r, err := v.Redactor(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, Mask+" "+Mask, r.String("first-password-1 second-password-2"))
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(v.Put(ctx, "acme", "x", []byte("short\n\n\n\n\n"))), "spaces do not make a value long enough")
}

// TestWrappedBase64IsMasked: a secret a job prints base64-encoded and
// wrapped (base64(1) at 76 columns, PEM at 64, CRLF, indented in YAML)
// is masked, every line of the block; base64 lines that hold no secret
// are left as they are.
func TestWrappedBase64IsMasked(t *testing.T) {
	secretValue := strings.Repeat("k3y-material-", 20) // 260 bytes: several lines once encoded
	r := NewRedactor([][]byte{[]byte(secretValue)})
	wrap := func(s string, width int, eol, indent string) string {
		var b strings.Builder
		for len(s) > width {
			b.WriteString(indent + s[:width] + eol)
			s = s[width:]
		}
		b.WriteString(indent + s + eol)
		return b.String()
	}
	enc := base64.StdEncoding.EncodeToString([]byte("prefix:" + secretValue))
	for _, out := range []string{
		"key:\n" + wrap(enc, 76, "\n", "") + "done\n",
		wrap(enc, 64, "\r\n", "  "),
		"-----BEGIN X-----\n" + wrap(enc, 64, "\n", "") + "-----END X-----",
		wrap(base64.URLEncoding.EncodeToString([]byte(secretValue)), 76, "\n", ""),
	} {
		masked := r.String(out)
		require.Contains(t, masked, Mask)
		for _, line := range strings.Split(strings.TrimSpace(wrap(enc, 76, "\n", "")), "\n") {
			require.NotContains(t, masked, line[10:40], "no line of the block is left")
		}
		require.NotContains(t, masked, "k3y-material")
	}
	harmless := wrap(base64.StdEncoding.EncodeToString([]byte(strings.Repeat("nothing secret here ", 10))), 76, "\n", "")
	require.Equal(t, harmless, r.String(harmless))

	// Lines that merely hold base64 characters are not a wrapped block:
	// only the secret in them is masked, the words around it stay.
	words := "password=" + secretValue[:20] + "\nuser=admin\nhost=db1\n"
	short := NewRedactor([][]byte{[]byte(secretValue[:20])})
	require.Equal(t, "password="+Mask+"\nuser=admin\nhost=db1\n", short.String(words))
}

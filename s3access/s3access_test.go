package s3access_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/s3access"
)

func TestWhatReachesAStore(t *testing.T) {
	loopback := func(a netip.Addr) bool { return a.IsLoopback() }
	for _, tc := range []struct {
		name  string
		attrs map[string]any
		want  string // "" for none
	}{
		{"nothing: a store no step reaches", map[string]any{"encryption": "required"}, ""},
		{"all three", map[string]any{"endpoint": "http://127.0.0.1:9000", "access_key": "secret:s3-access", "secret_key": "secret:s3-secret"}, ""},
		{"https with a name", map[string]any{"endpoint": "https://s3.internal", "access_key": "secret:a", "secret_key": "secret:b"}, ""},
		{"one missing", map[string]any{"endpoint": "http://127.0.0.1:9000", "access_key": "secret:a"}, "go together"},
		{"a key in clear", map[string]any{"endpoint": "http://127.0.0.1:9000", "access_key": "AKIA123", "secret_key": "secret:b"}, "access_key"},
		{"a path", map[string]any{"endpoint": "http://127.0.0.1:9000/bucket", "access_key": "secret:a", "secret_key": "secret:b"}, "nothing more"},
		{"a user", map[string]any{"endpoint": "http://u:p@127.0.0.1:9000", "access_key": "secret:a", "secret_key": "secret:b"}, "nothing more"},
		{"another scheme", map[string]any{"endpoint": "ftp://127.0.0.1", "access_key": "secret:a", "secret_key": "secret:b"}, "not http"},
		{"the cloud's metadata", map[string]any{"endpoint": "http://169.254.169.254", "access_key": "secret:a", "secret_key": "secret:b"}, "endpoint:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s3access.Check(tc.attrs, loopback)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

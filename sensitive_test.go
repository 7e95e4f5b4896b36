package capstan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestSensitiveAttributes(t *testing.T) {
	for k, want := range map[string]bool{"password": true, "db_password": true, "API_TOKEN": true, "client_secret": true, "private_key": true,
		"credentials": true, "tls_secret_name": false, "endpoint_ref": false, "user": false, "token_ttl_seconds": false} {
		require.Equal(t, want, capstan.SensitiveKey(k), k)
	}
	attrs := map[string]any{"password": "hunter2", "api_token": "secret:api", "token": 42, "user": "capstan"}
	require.Equal(t, []string{"password"}, capstan.LiteralSecrets(attrs))
	masked := capstan.MaskLiteralSecrets(attrs)
	require.Equal(t, capstan.SecretMask, masked["password"])
	require.Equal(t, "secret:api", masked["api_token"])
	require.Equal(t, "hunter2", attrs["password"], "the input is not changed")

}

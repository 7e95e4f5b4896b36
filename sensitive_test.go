package capstan_test

import (
	"fmt"
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

func TestArtifactNamesStayInTheOutputs(t *testing.T) {
	for _, name := range []string{"../../../secrets/secret.key", "a/b", "..", ""} {
		n := capstan.PlanNode{ID: "j", Type: capstan.NodeJob, Title: "J", Job: &capstan.JobContract{
			Run:     capstan.RunSpec{Runner: "sim"},
			Outputs: capstan.JobOutputs{Artifacts: []capstan.ArtifactSpec{{Name: name, Type: "x", Sensitivity: "secret"}}, Evidence: []capstan.Probe{{Name: "e", Type: "sim"}}}}}
		err := n.Validate()
		require.Error(t, err, name)
		require.Contains(t, err.Error()+fmt.Sprint(capstan.ErrorDetails(err)), "plain file name", name)
	}
}

package service_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/internal/testenv"
)

const credentialPack = `id: creds
version: 1.0.0
capabilities:
  - key: database.vault-backed
    category: database
    constraint_schema:
      version: {type: string}
      admin_password: {type: string, sensitive: true, description: the superuser's password}
`

func TestSensitiveCatalogAttributesMustBeReferences(t *testing.T) {
	svc := testenv.Demo(t, testenv.Store(t))
	admin := testenv.Admin(testenv.Org)
	_, err := svc.InstallPackYAML(admin, "creds.yaml", []byte(credentialPack))
	require.NoError(t, err)

	literal := []byte(`internal_services:
  - name: pg-main
    type: dbx.instance
    environment: prod
    provides:
      - capability: database.vault-backed
        attributes: {version: "16", admin_password: "hunter2-literal"}
  - name: pg-other
    type: dbx.instance
    environment: prod
    provides:
      - capability: database.vault-backed
        attributes: {admin_password: 12345678}
`)
	_, err = svc.ImportCatalog(admin, literal)
	require.Equal(t, capstan.EINVALID, capstan.ErrorCode(err))
	var ce *capstan.Error
	require.ErrorAs(t, err, &ce)
	require.Len(t, ce.Details, 2, "every offending attribute is named: %v", ce.Details)
	require.Contains(t, ce.Details[0], "attribute admin_password of database.vault-backed is sensitive")
	require.NotContains(t, err.Error(), "hunter2", "the value is not repeated in the error")
	_, err = svc.ResourceByKey(admin, "dbx.instance/pg-main")
	require.Equal(t, capstan.ENOTFOUND, capstan.ErrorCode(err), "nothing was imported")

	ref := []byte(`internal_services:
  - name: pg-main
    type: dbx.instance
    environment: prod
    provides:
      - capability: database.vault-backed
        attributes: {version: "16", admin_password: "secret:pg-main-admin"}
`)
	_, err = svc.ImportCatalog(admin, ref)
	require.NoError(t, err)
}

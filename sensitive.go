package capstan

import (
	"maps"
	"slices"
	"strings"
)

// sensitiveNames are the attribute names (or name endings) that hold
// credentials: their values are secret:<name> references to the secret
// store, never the values themselves.
var sensitiveNames = []string{"password", "passwd", "secret", "token", "api_key", "apikey", "private_key", "secret_key", "access_key", "credentials"}

// SecretMask replaces a literal value of a sensitive attribute on the
// way out.
const SecretMask = "[masked: not a secret: reference]"

// SensitiveKey reports whether an attribute named k holds a credential:
// it is, or ends with, one of the sensitive names (case ignored), so
// db_password and API_TOKEN are, tls_secret_name is not.
func SensitiveKey(k string) bool {
	k = strings.ToLower(k)
	return slices.ContainsFunc(sensitiveNames, func(n string) bool { return strings.HasSuffix(k, n) })
}

// LiteralSecrets lists, sorted, the sensitive keys of m whose value is a
// literal string rather than a secret:<name> reference.
func LiteralSecrets(m map[string]any) []string {
	var out []string
	for k, v := range m {
		if s, ok := v.(string); ok && SensitiveKey(k) && !strings.HasPrefix(s, "secret:") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// MaskLiteralSecrets returns m with every literal sensitive value masked
// (m itself when there is none): what a resource written before
// Validate refused them still holds is never shown.
func MaskLiteralSecrets(m map[string]any) map[string]any {
	keys := LiteralSecrets(m)
	if len(keys) == 0 {
		return m
	}
	out := maps.Clone(m)
	for _, k := range keys {
		out[k] = SecretMask
	}
	return out
}

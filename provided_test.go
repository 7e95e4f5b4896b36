package capstan_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestProvidedAttributesAreFilledByTheirOperation(t *testing.T) {
	lookup := func(r capstan.ProvidedRef) (string, error) {
		switch {
		case r.Binding == "host" && r.Attribute == "address":
			return "10.0.0.7", nil
		case r.Artifact == "access-key":
			return "secret:operations/op1/install/1/access-key", nil
		}
		return "", errors.New("no " + r.String())
	}
	for _, tc := range []struct {
		name     string
		attrs    map[string]any
		want     map[string]any
		problems []string
	}{
		{"nothing to fill", map[string]any{"encryption": "optional", "gb": 5}, map[string]any{"encryption": "optional", "gb": 5}, nil},
		{"a binding's attribute inside a URL", map[string]any{"endpoint": "http://${binding.host.address}:7070"},
			map[string]any{"endpoint": "http://10.0.0.7:7070"}, nil},
		{"a secret artifact", map[string]any{"access_key": "${artifact.access-key}"},
			map[string]any{"access_key": "secret:operations/op1/install/1/access-key"}, nil},
		{"one unknown: left out, the rest holds", map[string]any{"a": "${artifact.other}", "b": "${binding.host.address}"},
			map[string]any{"b": "10.0.0.7"}, []string{"a: no ${artifact.other}"}},
		{"not a placeholder", map[string]any{"a": "${intent.name}", "b": "x"},
			map[string]any{"b": "x"}, []string{`a: "${intent.name}": a placeholder here is ${binding.REQUIREMENT.ATTRIBUTE} or ${artifact.NAME}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := capstan.FillProvided(tc.attrs, lookup)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.problems, problems)
		})
	}
	require.Equal(t, map[string]any{"encryption": "optional"},
		capstan.KnownProvided(map[string]any{"encryption": "optional", "endpoint": "http://${binding.host.address}:7070"}))
}

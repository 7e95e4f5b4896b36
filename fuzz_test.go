package capstan_test

import (
	"encoding/json"
	"testing"

	"github.com/capstan-dev/capstan"
)

// FuzzCheckConstraint: any wanted and offered values (as JSON) get a
// check with a reason, never a panic.
func FuzzCheckConstraint(f *testing.F) {
	specs := []capstan.ConstraintSpec{{}, {Type: "integer", Match: "minimum"}, {Type: "string", Enum: []any{"a", "b"}}}
	f.Fuzz(func(t *testing.T, key string, want, got []byte, present bool) {
		var w, g any
		if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil {
			return
		}
		for _, spec := range specs {
			if c := capstan.CheckConstraint(key, spec, w, g, present); c.Reason == "" {
				t.Fatalf("no reason for %v", c)
			}
		}
	})
}

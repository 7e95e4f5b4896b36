package capstan_test

import (
	"testing"

	"github.com/capstan-dev/capstan"
)

func TestCheckPersonActor(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"alice", true}, {"alice@example.com", true}, {"agent-smith", true},
		{"", false}, {"ai-agent:rules", false}, {"AI-AGENT:rules", false}, {"ai-agent", false},
		{"executor", false}, {"Executor", false}, {"capstan", false},
		{" alice", false}, {"alice\n", false}, {"al\x07ice", false},
		{"first.last+ops@example.com", true}, {"A_B-9", true},
		{"\u0430lice", false},     // Cyrillic а: looks like alice
		{"ali\u200bce", false},    // zero-width space
		{"alice\u202e", false},    // right-to-left override
		{"exe\u00adcutor", false}, // soft hyphen: looks like executor
		{"alice bob", false}, {"alice/../bob", false}, {"<script>", false},
		{string(make([]byte, 129)), false},
	} {
		err := capstan.CheckPersonActor(tc.id)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPersonActor(%q) = %v, want ok %v", tc.id, err, tc.ok)
		}
	}
}

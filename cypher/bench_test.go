package cypher_test

import (
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/storetest"
)

func BenchmarkCandidates(b *testing.B) {
	storetest.BenchmarkCandidates(b, func(b *testing.B) capstan.Store { return open(b) })
}

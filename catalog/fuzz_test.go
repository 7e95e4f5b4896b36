package catalog_test

import (
	"testing"

	"github.com/capstan-dev/capstan/catalog"
)

// FuzzParse: the catalog parser answers any bytes with resources or a
// typed error, never a panic.
func FuzzParse(f *testing.F) {
	f.Add(catalog.Demo)
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := catalog.Parse(data)
		if err == nil {
			for _, r := range rs {
				if r == nil {
					t.Fatal("a nil resource")
				}
			}
		}
	})
}

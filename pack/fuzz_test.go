package pack_test

import (
	"testing"

	"github.com/capstan-dev/capstan/pack"
	"github.com/capstan-dev/capstan/packs"
)

// FuzzParse: the pack parser answers any bytes with a pack or problems,
// never a panic.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"minio.yaml", "simulated/tempo.yaml", "tempo/pack.yaml", "platform.yaml"} {
		data, err := packs.FS.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, problems := pack.Parse("fuzz.yaml", data, nil)
		if p == nil && len(problems) == 0 {
			t.Fatal("neither a pack nor a problem")
		}
	})
}

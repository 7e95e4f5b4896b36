package embedded_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryWriteGoesThroughTheWriter: the store's code changes a bucket
// only through its writer, which keeps each put and delete for the step
// log; a write past it would be acknowledged without being durable (the
// crash sweep finds one only if it happens to run it). Allowed besides
// the writer's own methods: the flush, which writes to bbolt what the
// writer put in the memtable and logged; recovery's replay of the log;
// and the migrations (made durable by the checkpoint after them).
func TestEveryWriteGoesThroughTheWriter(t *testing.T) {
	writes := map[string]bool{"Put": true, "Delete": true, "NextSequence": true, "SetSequence": true,
		"CreateBucket": true, "CreateBucketIfNotExists": true, "DeleteBucket": true, "MoveBucket": true}
	allowed := map[string]bool{"group.go:put": true, "group.go:delete": true, "checkpoint.go:replay": true, "flush.go:flush": true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "migrate.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || allowed[name+":"+fn.Name.Name] {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !writes[sel.Sel.Name] {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "arenas" { // a sync.Pool
					return true
				}
				found = append(found, fset.Position(call.Pos()).String()+" ("+fn.Name.Name+")")
				return true
			})
		}
	}
	require.Empty(t, found, "writes past the writer (use w.put, w.putJSON, w.delete)")
}

// Package graphdump copies a whole Neo4j graph to JSON lines and back,
// whatever its labels, relationship types and properties, without APOC:
// what the upgrade fixtures keep of a database an older release wrote
// (a Capstan backup cannot: that release may predate backups, and a
// backup holds what this build reads, not what the old one wrote).
//
// Each line is a node {"node": id, "labels", "props"} or a relationship
// {"rel": type, "from", "to", "props"}; nodes come first. Property
// values keep their types: integers stay integers, and date-times are
// {"$datetime": RFC 3339}.
package graphdump

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

type line struct {
	Node   string         `json:"node,omitempty"`
	Labels []string       `json:"labels,omitempty"`
	Rel    string         `json:"rel,omitempty"`
	From   string         `json:"from,omitempty"`
	To     string         `json:"to,omitempty"`
	Props  map[string]any `json:"props"`
}

// Export writes every node and relationship of the database, in one read
// transaction.
func Export(ctx context.Context, driver neo4j.DriverWithContext, database string, w io.Writer) error {
	sess := driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeRead, DatabaseName: database})
	defer sess.Close(ctx)
	tx, err := sess.BeginTransaction(ctx)
	if err != nil {
		return err
	}
	defer tx.Close(ctx)
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	emit := func(q string, fn func(m map[string]any) line) error {
		res, err := tx.Run(ctx, q, nil)
		if err != nil {
			return err
		}
		for res.Next(ctx) {
			l := fn(res.Record().AsMap())
			l.Props = encodeProps(l.Props)
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return res.Err()
	}
	err = emit(`MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props ORDER BY id`, func(m map[string]any) line {
		var labels []string
		for _, l := range m["labels"].([]any) {
			labels = append(labels, l.(string))
		}
		slices.Sort(labels)
		return line{Node: m["id"].(string), Labels: labels, Props: m["props"].(map[string]any)}
	})
	if err != nil {
		return err
	}
	err = emit(`MATCH (a)-[r]->(b) RETURN elementId(a) AS a, elementId(b) AS b, type(r) AS type, properties(r) AS props ORDER BY a, b, type`, func(m map[string]any) line {
		return line{Rel: m["type"].(string), From: m["a"].(string), To: m["b"].(string), Props: m["props"].(map[string]any)}
	})
	if err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func encodeProps(props map[string]any) map[string]any {
	out := make(map[string]any, len(props))
	for k, v := range props {
		out[k] = encodeValue(v)
	}
	return out
}

func encodeValue(v any) any {
	switch x := v.(type) {
	case time.Time:
		return map[string]any{"$datetime": x.Format(time.RFC3339Nano)}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = encodeValue(e)
		}
		return out
	}
	return v
}

// Import creates, in an empty database, the nodes and relationships an
// Export wrote. Nodes are matched to their relationships through a
// temporary label and indexed property, removed at the end.
func Import(ctx context.Context, driver neo4j.DriverWithContext, database string, r io.Reader) error {
	run := func(q string, params map[string]any) error {
		_, err := neo4j.ExecuteQuery(ctx, driver, q, params, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(database))
		return err
	}
	if err := run(`CREATE INDEX graphdump_gid IF NOT EXISTS FOR (n:GraphdumpImported) ON (n.graphdump_gid)`, nil); err != nil {
		return err
	}
	if err := run(`CALL db.awaitIndexes(60)`, nil); err != nil {
		return err
	}
	nodes := map[string][]map[string]any{} // by label set
	rels := map[string][]map[string]any{}  // by type
	dec := json.NewDecoder(bufio.NewReader(r))
	dec.UseNumber()
	for {
		var l line
		err := dec.Decode(&l)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("graphdump: %w", err)
		}
		props := decodeProps(l.Props)
		switch {
		case l.Node != "":
			key := strings.Join(l.Labels, ":")
			nodes[key] = append(nodes[key], map[string]any{"gid": l.Node, "props": props})
		case l.Rel != "":
			rels[l.Rel] = append(rels[l.Rel], map[string]any{"from": l.From, "to": l.To, "props": props})
		}
	}
	for labels, rows := range nodes {
		q := `UNWIND $rows AS r CREATE (n:GraphdumpImported` + labelList(labels) + `) SET n += r.props, n.graphdump_gid = r.gid`
		if err := run(q, map[string]any{"rows": rows}); err != nil {
			return err
		}
	}
	for typ, rows := range rels {
		q := `UNWIND $rows AS r MATCH (a:GraphdumpImported {graphdump_gid: r.from}), (b:GraphdumpImported {graphdump_gid: r.to})
CREATE (a)-[x:` + quote(typ) + `]->(b) SET x += r.props`
		if err := run(q, map[string]any{"rows": rows}); err != nil {
			return err
		}
	}
	if err := run(`MATCH (n:GraphdumpImported) REMOVE n:GraphdumpImported, n.graphdump_gid`, nil); err != nil {
		return err
	}
	return run(`DROP INDEX graphdump_gid IF EXISTS`, nil)
}

func labelList(labels string) string {
	if labels == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(labels, ":") {
		b.WriteString(":" + quote(l))
	}
	return b.String()
}

func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

func decodeProps(props map[string]any) map[string]any {
	out := make(map[string]any, len(props))
	for k, v := range props {
		out[k] = decodeValue(v)
	}
	return out
}

func decodeValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		if s, ok := x["$datetime"].(string); ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err == nil {
				return t
			}
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = decodeValue(e)
		}
		return out
	}
	return v
}

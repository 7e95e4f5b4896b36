package cypher

// KeyLookups are the statements that find resources or profiles by their
// unique keys from a list, each with parameters that make it find some,
// for the PROFILE test that holds them to index seeks (given the keys of
// resources that exist, and a profile uid that exists).
func KeyLookups(ukeys []string, profile string) map[string]struct {
	Query  string
	Params map[string]any
} {
	rows := []map[string]any{}
	for _, k := range ukeys {
		rows = append(rows, map[string]any{"ukey": k, "from": k, "to": ukeys[0], "props": map[string]any{},
			"provides": []map[string]any{{"profile": profile, "props": map[string]any{}}}})
	}
	type q = struct {
		Query  string
		Params map[string]any
	}
	return map[string]q{
		"stored resources":     {qResourcesByUkey, map[string]any{"ukeys": ukeys}},
		"drop edges":           {qDropResourceEdges, map[string]any{"ukeys": ukeys}},
		"missing targets":      {qMissingTargets, map[string]any{"targets": ukeys}},
		"relationships":        {relQuery("RUNS_ON"), map[string]any{"rows": rows}},
		"update with provides": {qUpdateResources, map[string]any{"rows": rows}},
		"resources by key":     {qGetResourcesByKey, map[string]any{"ukeys": ukeys}},
	}
}

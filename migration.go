package capstan

// Migration is one numbered step of how a store keeps its data. A store
// records the level it has reached and, when it opens, runs the
// migrations above it in order, each recorded as it commits: a crash
// between two leaves the rest for the next start. A store whose level
// is above every migration this build knows was written by a newer
// Capstan, and is refused (CheckSchemaLevel) rather than misread.
type Migration struct {
	Level int    `json:"level"`
	Name  string `json:"name"`
	// Does says what the migration changes (docs/OPERATIONS.md lists it).
	Does string `json:"does"`
}

// CheckSchemaLevel refuses a store at a level above the known ones.
func CheckSchemaLevel(store string, have int, known []Migration) error {
	if top := len(known); have > top {
		return Errorf(EINVALID, "the %s store is at schema level %d, written by a newer Capstan; this build knows levels up to %d: run the newer release, or restore a backup taken at level %d or below", store, have, top, top)
	}
	return nil
}

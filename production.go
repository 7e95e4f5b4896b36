package capstan

import (
	"slices"
	"strings"
)

// ProductionEnvironments declares which environments are production. Every
// rule that is stricter in production asks Is: invariant 12's required
// constraints, a second person for patches and gates, who may reveal a
// secret, inline code, and the packs' policies (through intent.production).
// It is configuration (capstan serve --production-environments), not a
// guess from a name: an environment is production because it is declared
// so. Names compare without case and around spaces.
type ProductionEnvironments struct {
	names []string
}

// DefaultProductionEnvironments is the declaration when none is
// configured: prod and production.
var DefaultProductionEnvironments = DeclareProduction("prod", "production")

// DeclareProduction declares names as the production environments.
func DeclareProduction(names ...string) ProductionEnvironments {
	var out []string
	for _, n := range names {
		if n = normalEnvironment(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return ProductionEnvironments{names: out}
}

// Is reports whether env is declared production. The zero value declares
// DefaultProductionEnvironments, so a forgotten declaration never turns
// production's rules off.
func (p ProductionEnvironments) Is(env string) bool {
	if p.names == nil {
		p = DefaultProductionEnvironments
	}
	return slices.Contains(p.names, normalEnvironment(env))
}

// Names lists the declared production environments.
func (p ProductionEnvironments) Names() []string {
	if p.names == nil {
		p = DefaultProductionEnvironments
	}
	return slices.Clone(p.names)
}

func normalEnvironment(env string) string { return strings.ToLower(strings.TrimSpace(env)) }

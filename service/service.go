// Package service is Capstan's application layer: each method is one use
// case (install a pack, import a catalog, create and plan an intent, edit a
// plan) over the store, the pack loader and the planner. The caller's
// organization and identity come from the context; resolvers decode
// arguments, make one call here, and encode the result.
package service

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/catalog"
	"github.com/capstan-dev/capstan/pack"
	"github.com/capstan-dev/capstan/planner"
	"github.com/capstan-dev/capstan/policy"
	"github.com/capstan-dev/capstan/secret"
)

// Service implements Capstan's use cases.
type Service struct {
	Store capstan.Store
	Now   func() time.Time
	Log   *slog.Logger
	// Changes wakes a mutation waiting for its command's outcome (nil:
	// it reads the command at growing intervals).
	Changes Changes
	// CommandWait bounds a mutation's wait for its command's outcome
	// before it answers PENDING (0: capstan.MaxCommandWait).
	CommandWait time.Duration
	// Secrets is the secret store (nil: putSecret and revealSecret are
	// UNAVAILABLE).
	Secrets *secret.Vault
	// Production declares the production environments every rule that is
	// stricter in production asks (the zero value:
	// capstan.DefaultProductionEnvironments).
	Production capstan.ProductionEnvironments
	// Assessor assesses resources on demand (nil: assessResource is
	// UNAVAILABLE).
	Assessor Assessor
	// AllowAddress says whether a catalog's node may name an address that
	// is the host's or the cloud's own (loopback, link-local, metadata):
	// the server's egress allow-list names it. Nil refuses them.
	AllowAddress func(netip.Addr) bool
	// Previewer dry-runs a plan's kubernetes steps (nil: Plan.clusterPreview
	// is UNAVAILABLE).
	Previewer Previewer

	previewOnce  sync.Once
	previewSlots chan struct{}
	graphOnce    sync.Once
	graphSlots   chan struct{}

	mu       sync.Mutex
	compiled map[string]policy.Set   // by the policies' text, so edits recompile
	packCtx  map[string]*packContext // by organization
	progress progressCache
}

// New returns a service over store.
func New(store capstan.Store, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{Store: store, Now: time.Now, Log: log}
}

// Org returns the caller's organization, or EUNAUTHENTICATED.
func Org(ctx context.Context) (string, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return "", err
	}
	return a.OrganizationID, nil
}

// requireAction returns the caller if they may take a role-only action
// (capstan.ActionRoles), EFORBIDDEN naming the roles otherwise.
func requireAction(ctx context.Context, act capstan.Action) (*capstan.Actor, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.May(act); err != nil {
		return nil, err
	}
	return a, nil
}

// knownCapabilities returns the organization's capability definitions by key.
func (s *Service) knownCapabilities(ctx context.Context, org string) (map[string]*capstan.CapabilityDefinition, error) {
	defs, err := s.Store.ListCapabilities(ctx, org)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*capstan.CapabilityDefinition, len(defs))
	for _, d := range defs {
		out[d.Key] = d
	}
	return out, nil
}

// InstallPackYAML lints a single-file pack and installs it.
func (s *Service) InstallPackYAML(ctx context.Context, name string, data []byte) (*capstan.ScenarioPack, error) {
	a, err := requireAction(ctx, capstan.ActionInstallScenarioPack)
	if err != nil {
		return nil, err
	}
	known, err := s.knownCapabilities(ctx, a.OrganizationID)
	if err != nil {
		return nil, err
	}
	p, problems := pack.Parse(name, data, known)
	if err := pack.ProblemsError("pack "+name, problems); err != nil {
		return nil, err
	}
	if _, err := s.Store.InstallPack(ctx, a.OrganizationID, p); err != nil {
		return nil, err
	}
	return p, nil
}

// InstallPacks loads the packs at paths of fsys (in order) and installs
// them into org. It is how the server installs the bundled packs and
// --packs directories at start; already installed identical packs are kept.
func (s *Service) InstallPacks(ctx context.Context, org string, fsys fs.FS, paths []string) error {
	known, err := s.knownCapabilities(ctx, org)
	if err != nil {
		return err
	}
	packs, problems := pack.LoadSet(fsys, paths, known)
	if err := pack.ProblemsError("packs", problems); err != nil {
		return err
	}
	for _, p := range packs {
		created, err := s.Store.InstallPack(ctx, org, p)
		if err != nil {
			return err
		}
		if created {
			s.Log.Info("pack installed", "org", org, "pack", p.Ref(), "scenarios", len(p.Scenarios))
		}
	}
	return nil
}

// ImportCatalog parses a catalog document and upserts its resources.
func (s *Service) ImportCatalog(ctx context.Context, data []byte) (capstan.ImportResult, error) {
	a, err := requireAction(ctx, capstan.ActionImportCatalog)
	if err != nil {
		return capstan.ImportResult{}, err
	}
	return s.importCatalog(ctx, a.OrganizationID, data)
}

func (s *Service) importCatalog(ctx context.Context, org string, data []byte) (capstan.ImportResult, error) {
	rs, err := catalog.ParseWith(data, catalog.Options{AllowAddress: s.AllowAddress})
	if err != nil {
		return capstan.ImportResult{}, err
	}
	if err := s.referencedSecretsExist(ctx, org, rs); err != nil {
		return capstan.ImportResult{}, err
	}
	defs, err := s.Store.ListCapabilities(ctx, org)
	if err != nil {
		return capstan.ImportResult{}, err
	}
	if err := SensitiveAsReferences(rs, defs); err != nil {
		return capstan.ImportResult{}, err
	}
	return s.Store.ImportResources(ctx, org, rs)
}

// SensitiveAsReferences refuses resources that give a sensitive attribute
// — one its capability marks sensitive, or one named like a credential
// (capstan.SensitiveKey: password, token, …, also of a capability no pack
// defines) — a value rather than a secret:<name> reference: catalogs are
// shown to viewers, credentials never are.
func SensitiveAsReferences(rs []*capstan.Resource, defs []*capstan.CapabilityDefinition) error {
	byKey := map[string]*capstan.CapabilityDefinition{}
	for _, d := range defs {
		byKey[d.Key] = d
	}
	var p capstan.Problems
	for _, r := range rs {
		for _, pc := range r.ProvidedCapabilities {
			def := byKey[pc.Capability]
			for _, key := range slices.Sorted(maps.Keys(pc.Attributes)) {
				sensitive := capstan.SensitiveKey(key)
				if def != nil && def.ConstraintSchema[key].Sensitive {
					sensitive = true
				}
				if !sensitive {
					continue
				}
				if v, isString := pc.Attributes[key].(string); !isString || !isSecretRef(v) {
					p.Addf("%s: attribute %s of %s is sensitive: give a secret:<name> reference (putSecret), not a value", r.Key(), key, pc.Capability)
				}
			}
		}
	}
	return p.Err("catalog")
}

// referencedSecretsExist refuses a catalog whose ssh.access credentials
// name a secret the importing organization does not hold: a reference
// resolves in its resource's own organization only, so one that looks
// like another's (secret:globex/key) is said so at import, not at the
// first job. Without a secret store there is nothing to check against.
func (s *Service) referencedSecretsExist(ctx context.Context, org string, rs []*capstan.Resource) error {
	if s.Secrets == nil {
		return nil
	}
	entries, err := s.Secrets.List(ctx, org)
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for _, e := range entries {
		held[e.Name] = true
	}
	var p capstan.Problems
	for _, r := range rs {
		pc := r.Provides(capstan.SSHAccess)
		if pc == nil {
			continue
		}
		for _, field := range []string{"private_key", "certificate"} {
			ref, _ := pc.Attributes[field].(string)
			if name, ok := secret.ParseRef(ref); ok && !held[name] {
				p.Addf("%s: ssh.access %s refers to secret %q, which organization %s does not hold (a reference resolves in its own organization only: putSecret first)", r.Key(), field, name, org)
			}
		}
	}
	return p.Err("catalog")
}

func isSecretRef(v string) bool {
	_, ok := secret.ParseRef(v)
	return ok
}

// SeedDemoCatalog imports the bundled demo catalog into org when org has no
// resources yet.
func (s *Service) SeedDemoCatalog(ctx context.Context, org string, data []byte) error {
	_, total, err := s.Store.ListResources(ctx, org, capstan.ResourceFilter{Limit: 1})
	if err != nil || total > 0 {
		return err
	}
	res, err := s.importCatalog(ctx, org, data)
	if err == nil {
		s.Log.Info("demo catalog imported", "org", org, "resources", res.Created)
	}
	return err
}

// planner returns a planner with the organization's compiled policies.
func (s *Service) planner(ctx context.Context, org string) (*planner.Planner, error) {
	ps, err := s.Store.ListPolicies(ctx, org)
	if err != nil {
		return nil, err
	}
	set, err := s.compile(ps)
	if err != nil {
		return nil, err
	}
	return &planner.Planner{Catalog: s.Store, Policies: set, Production: s.Production}, nil
}

// compile returns the compiled policies, reusing an earlier compilation of
// the very same policy texts.
func (s *Service) compile(ps []*capstan.Policy) (policy.Set, error) {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x00%s\x00", p.Pack, p.ID, p.Capability, p.When, p.Require)
	}
	key := b.String()
	s.mu.Lock()
	set, ok := s.compiled[key]
	s.mu.Unlock()
	if ok {
		return set, nil
	}
	set, err := policy.CompileAll(ps)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.compiled == nil || len(s.compiled) > 64 {
		s.compiled = map[string]policy.Set{}
	}
	s.compiled[key] = set
	s.mu.Unlock()
	return set, nil
}

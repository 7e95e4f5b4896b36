// Package catalog imports the existing platform's catalog (clusters,
// compute_nodes, internal_services, external_services,
// marketplace_services; SPEC §9) into Resources with their provided
// capabilities and relationships.
package catalog

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"net/netip"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/kubeaccess"
	"github.com/capstan-dev/capstan/s3access"
	"github.com/capstan-dev/capstan/sshaccess"
)

// Demo is the bundled demo catalog.
//
//go:embed demo.yaml
var Demo []byte

// MaxSize bounds a catalog document.
const MaxSize = 16 << 20

// File is the catalog document: YAML or JSON.
type File struct {
	Organization        string    `json:"organization,omitempty"`
	Environments        []string  `json:"environments,omitempty"`
	Clusters            []Cluster `json:"clusters,omitempty"`
	ComputeNodes        []Node    `json:"compute_nodes,omitempty"`
	InternalServices    []Service `json:"internal_services,omitempty"`
	ExternalServices    []Service `json:"external_services,omitempty"`
	MarketplaceServices []Service `json:"marketplace_services,omitempty"`
}

// Common holds the fields every catalog row has.
type Common struct {
	Name          string                  `json:"name"`
	Environment   string                  `json:"environment"`
	Region        string                  `json:"region,omitempty"`
	Status        capstan.LifecycleStatus `json:"status,omitempty"`
	Health        capstan.HealthStatus    `json:"health,omitempty"`
	DesiredState  map[string]any          `json:"desired_state,omitempty"`
	ObservedState map[string]any          `json:"observed_state,omitempty"`
	DependsOn     []string                `json:"depends_on,omitempty"`
	ConnectsTo    []string                `json:"connects_to,omitempty"`
}

// Cluster is a row of the platform's clusters table.
type Cluster struct {
	Common
	Version string `json:"version,omitempty"`
	// Nodes names the compute nodes the cluster runs on.
	Nodes []string `json:"nodes,omitempty"`
	// APIServer is where Capstan reaches the cluster's API (https), CA
	// its certificate authority (PEM), pinned, and Credentials a
	// secret:<name> reference to the token of the identity Capstan acts
	// as (a ServiceAccount whose RBAC the packs declare). All three, or
	// none: a cluster without them is one no real step can reach.
	APIServer   string `json:"api_server,omitempty"`
	CA          string `json:"ca,omitempty"`
	Credentials string `json:"credentials,omitempty"`
}

// Node is a row of the platform's compute_nodes table.
type Node struct {
	Common
	OS       string `json:"os,omitempty"`
	CPUCores int    `json:"cpu_cores,omitempty"`
	SSHUser  string `json:"ssh_user,omitempty"`
	// Address is where the node is reached (an IP address or a host
	// name), SSHPort its sshd's port (default 22).
	Address string `json:"address,omitempty"`
	SSHPort *int   `json:"ssh_port,omitempty"`
	// SSHHostKey pins the node's host key(s), in authorized_keys format
	// (ssh-ed25519 AAAA…; one per line): a job reaches the node only
	// when it presents one of them.
	SSHHostKey string `json:"ssh_host_key,omitempty"`
	// SSHPrivateKey and SSHCertificate are secret:<name> references to the
	// client's private key and its optional certificate.
	SSHPrivateKey  string `json:"ssh_private_key,omitempty"`
	SSHCertificate string `json:"ssh_certificate,omitempty"`
	// RegistryAccess says the node reaches the public container registry
	// (it then provides network.registry_access).
	RegistryAccess bool `json:"registry_access,omitempty"`
}

// Service is a row of internal, external or marketplace services.
type Service struct {
	Common
	Type     string                       `json:"type"`
	Provides []capstan.ProvidedCapability `json:"provides,omitempty"`
	// RunsOn is a cluster name or a resource key.
	RunsOn string `json:"runs_on,omitempty"`
}

// Resource types the catalog's tables map to.
const (
	ClusterType = "kubernetes.cluster"
	NodeType    = "compute.node"
)

// Options are what an import allows beyond the catalog's own rules.
type Options struct {
	// AllowAddress says whether a node may name an address that is the
	// host's or the cloud's own (loopback, link-local, metadata;
	// netguard.Sensitive): only when the server's egress allow-list names
	// it. Nil refuses them all.
	AllowAddress func(netip.Addr) bool
}

// Parse reads a catalog document (YAML or JSON) into resources, reporting
// every problem at once.
func Parse(data []byte) ([]*capstan.Resource, error) { return ParseWith(data, Options{}) }

// ParseWith is Parse with the import's options.
func ParseWith(data []byte, opts Options) ([]*capstan.Resource, error) {
	if len(data) > MaxSize {
		return nil, capstan.Errorf(capstan.EINVALID, "catalog is %d bytes, more than the %d allowed", len(data), MaxSize)
	}
	var generic any
	if err := yaml.Unmarshal(data, &generic); err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "catalog is not valid YAML or JSON: %v", err)
	}
	js, err := json.Marshal(generic)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "catalog has a value JSON cannot hold: %v", err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "catalog: %v", err)
	}
	return f.resources(opts)
}

// Resources turns the catalog's rows into resources.
func (f *File) Resources() ([]*capstan.Resource, error) { return f.resources(Options{}) }

func (f *File) resources(opts Options) ([]*capstan.Resource, error) {
	var out []*capstan.Resource
	var p capstan.Problems
	for _, c := range f.Clusters {
		r := base(c.Common, ClusterType, "catalog:clusters")
		c.checkAccess(opts, &p)
		r.ProvidedCapabilities = []capstan.ProvidedCapability{{
			Capability: ClusterType,
			Scope:      scope(c.Common),
			Attributes: optional(map[string]any{"version": c.Version, "api_server": c.APIServer, "ca": c.CA, "credentials": c.Credentials}),
		}}
		for _, n := range c.Nodes {
			r.Relationships = append(r.Relationships, capstan.Relationship{Type: capstan.RelRunsOn, Target: capstan.ResourceKey(NodeType, n)})
		}
		out = append(out, r)
	}
	for _, n := range f.ComputeNodes {
		r := base(n.Common, NodeType, "catalog:compute_nodes")
		n.checkAccess(opts, &p)
		var port any
		if n.SSHPort != nil {
			port = *n.SSHPort
		}
		r.ProvidedCapabilities = []capstan.ProvidedCapability{
			{Capability: "linux.host", Scope: scope(n.Common), Attributes: optional(map[string]any{"os": n.OS, "cpu_cores": n.CPUCores})},
			{Capability: capstan.SSHAccess, Attributes: optional(map[string]any{"user": n.SSHUser, "address": n.Address, "port": port,
				"host_key": n.SSHHostKey, "private_key": n.SSHPrivateKey, "certificate": n.SSHCertificate})},
		}
		if n.RegistryAccess {
			r.ProvidedCapabilities = append(r.ProvidedCapabilities, capstan.ProvidedCapability{Capability: "network.registry_access", Scope: scope(n.Common)})
		}
		out = append(out, r)
	}
	for table, rows := range map[string][]Service{
		"internal_services": f.InternalServices, "external_services": f.ExternalServices, "marketplace_services": f.MarketplaceServices,
	} {
		for _, s := range rows {
			if s.Type == "" {
				p.Addf("%s %s: type is empty", table, s.Name)
				continue
			}
			r := base(s.Common, s.Type, "catalog:"+table)
			for _, pc := range s.Provides {
				if pc.Capability == capstan.ObjectStorageS3 {
					if err := s3access.Check(pc.Attributes, opts.AllowAddress); err != nil {
						p.Addf("%s %s: %s: %v", table, s.Name, pc.Capability, err)
					}
				}
				if pc.Scope == nil {
					pc.Scope = scope(s.Common)
				}
				r.ProvidedCapabilities = append(r.ProvidedCapabilities, pc)
			}
			if s.RunsOn != "" {
				target := s.RunsOn
				if _, _, ok := capstan.SplitResourceKey(target); !ok {
					target = capstan.ResourceKey(ClusterType, target)
				}
				r.Relationships = append(r.Relationships, capstan.Relationship{Type: capstan.RelRunsOn, Target: target})
			}
			out = append(out, r)
		}
	}
	for _, r := range out {
		if err := r.Validate(); err != nil {
			p = append(p, capstan.ErrorDetails(err)...)
		}
	}
	if err := p.Err("catalog"); err != nil {
		return nil, err
	}
	sortResources(out)
	return out, nil
}

// checkAccess holds a cluster's access to kubeaccess's rules, and its
// credentials to a reference into the importing organization's secrets.
func (c Cluster) checkAccess(opts Options, p *capstan.Problems) {
	where := "clusters " + c.Name
	set := 0
	for _, v := range []string{c.APIServer, c.CA, c.Credentials} {
		if v != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return
	case set < 3:
		p.Addf("%s: api_server, ca and credentials go together: a cluster Capstan reaches needs all three", where)
		return
	}
	if err := kubeaccess.APIServer(c.APIServer, opts.AllowAddress); err != nil {
		p.Addf("%s: %v", where, err)
	}
	if err := kubeaccess.CA(c.CA); err != nil {
		p.Addf("%s: %v", where, err)
	}
	if err := sshaccess.SecretRef(c.Credentials); err != nil {
		p.Addf("%s: credentials: %v", where, err)
	}
}

// checkAccess holds a node's ssh.access fields to the rules of what
// reaches a command line, an inventory or a known_hosts file (sshaccess),
// and its credentials to references into the importing organization's
// own secret store.
func (n Node) checkAccess(opts Options, p *capstan.Problems) {
	where := "compute_nodes " + n.Name
	if n.Address != "" {
		if err := sshaccess.Address(n.Address, opts.AllowAddress); err != nil {
			p.Addf("%s: %v", where, err)
		}
	}
	if n.SSHPort != nil {
		if err := sshaccess.Port(*n.SSHPort); err != nil {
			p.Addf("%s: %v", where, err)
		}
	}
	if n.SSHUser != "" {
		if err := sshaccess.User(n.SSHUser); err != nil {
			p.Addf("%s: %v", where, err)
		}
	}
	if n.SSHHostKey != "" {
		if _, err := sshaccess.HostKeys(n.SSHHostKey); err != nil {
			p.Addf("%s: ssh_host_key: %v", where, err)
		}
	}
	for field, ref := range map[string]string{"ssh_private_key": n.SSHPrivateKey, "ssh_certificate": n.SSHCertificate} {
		if ref == "" {
			continue
		}
		if err := sshaccess.SecretRef(ref); err != nil {
			p.Addf("%s: %s: %v", where, field, err)
		}
	}
}

func base(c Common, typ, source string) *capstan.Resource {
	r := &capstan.Resource{
		Type: typ, Name: c.Name, Environment: c.Environment,
		DesiredState: c.DesiredState, ObservedState: c.ObservedState,
		LifecycleStatus: c.Status, HealthStatus: c.Health, Source: source,
	}
	if r.LifecycleStatus == "" {
		r.LifecycleStatus = capstan.LifecycleActive
	}
	if r.HealthStatus == "" {
		r.HealthStatus = capstan.HealthUnknown
	}
	for _, d := range c.DependsOn {
		r.Relationships = append(r.Relationships, capstan.Relationship{Type: capstan.RelDependsOn, Target: d})
	}
	for _, d := range c.ConnectsTo {
		r.Relationships = append(r.Relationships, capstan.Relationship{Type: capstan.RelConnectsTo, Target: d})
	}
	return r
}

func scope(c Common) map[string]any {
	return optional(map[string]any{"environment": c.Environment, "region": c.Region})
}

// optional drops zero values.
func optional(m map[string]any) map[string]any {
	for k, v := range m {
		if v == "" || v == 0 || v == nil {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

func sortResources(rs []*capstan.Resource) {
	// A stable order keeps imports and their results reproducible.
	slices.SortFunc(rs, func(a, b *capstan.Resource) int { return strings.Compare(a.Key(), b.Key()) })
}

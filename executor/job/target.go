package job

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/kubeaccess"
	"github.com/capstan-dev/capstan/s3access"
	"github.com/capstan-dev/capstan/secret"
	"github.com/capstan-dev/capstan/sshaccess"
)

// A Target is a host or cluster a remote job or probe acts on: a
// resource of the catalog bound to one of the node's requirements, with
// what its ssh.access capability (a host) or kubernetes.cluster
// capability (a cluster: Cluster is set) says of it. Nothing else is ever
// a target: a pack names a requirement, never an address, so a job
// reaches only the hosts and clusters the catalog holds and the plan
// bound.
type Target struct {
	// Cluster is set when the target is a Kubernetes API; the SSH fields
	// below are empty then.
	Cluster *Cluster
	// Store is set when the target is an S3 object store (the s3 runner
	// and probe's); the SSH fields are empty then.
	Store *Store

	// Requirement is the binding's id; Resource the provider's key
	// (compute.node/h1).
	Requirement, Resource string
	Address               string
	Port                  int
	User                  string
	// HostKeys are the pinned host keys, in authorized_keys format
	// (ssh-ed25519 AAAA…): the host must present one of them.
	HostKeys []string
	// Key is the client's private key (PEM), Certificate its optional
	// certificate (authorized_keys format): the values of the secret
	// references the catalog holds, resolved for this attempt only.
	Key, Certificate []byte
	// TrustOnFirstUse: the node's pack asked to trust the key a host with
	// no pinned key presents; Learned is that key once trusted (the
	// attempt pins it on the compute node and audits it: host_key.trusted).
	TrustOnFirstUse bool
	Learned         string
	// Password is what a postgres probe logs in with: the value of the
	// operation's secret artifact it names, read for this probe only.
	Password []byte
}

// IsHost reports whether the target is a host reached over SSH (not a
// cluster's API, not an object store).
func (t *Target) IsHost() bool { return t != nil && t.Cluster == nil && t.Store == nil }

// Store is an S3 object store as a job reaches it: its endpoint (http or
// https URL, s3access) and keys, the values of the secret references the
// catalog holds, resolved for this attempt only.
type Store struct {
	Endpoint             string
	AccessKey, SecretKey []byte
}

// Cluster is a Kubernetes API as a job reaches it.
type Cluster struct {
	// Server is the API server's https URL; CA its certificate
	// authority (PEM), pinned on the cluster resource.
	Server string
	CA     []byte
	// Token is the bearer token the credentials reference resolves to,
	// for this attempt only.
	Token []byte
}

// String names the target in errors and evidence.
func (t *Target) String() string {
	if t.Cluster != nil {
		return fmt.Sprintf("%s (%s)", t.Resource, t.Cluster.Server)
	}
	return fmt.Sprintf("%s (%s@%s:%d)", t.Resource, t.User, t.Address, t.Port)
}

// ErrKindTarget is the error kind of an attempt whose target cannot be
// resolved (not bound, not a reachable compute node, no key); ErrKindHostKey
// that of a host presenting a key that is not pinned. Neither is retried:
// another attempt would meet the same catalog, or the same host.
const (
	ErrKindTarget  = "target"
	ErrKindHostKey = "host_key"
	// ErrKindPlaybook: a playbook that would run on the controller,
	// refused before it runs (playbook.Check).
	ErrKindPlaybook = "playbook"
	// A cluster refused the step (executor/kube): its RBAC forbids it, its
	// admission finds the object invalid, or another field manager owns a
	// field the step would set. Another attempt would meet the same.
	ErrKindForbidden = "forbidden"
	ErrKindInvalid   = "invalid"
	ErrKindConflict  = "conflict"
	// ErrKindUnavailable: an API that did not answer (a cluster's, a
	// store's); another attempt may find it back.
	ErrKindUnavailable = "unavailable"
)

// Error is a failure of a runner or probe that reaches an API from the
// server (kubernetes, helm, s3), with the kind the retry policy reads.
type Error struct {
	Kind string
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ProbeFailed is a remote probe's failed verdict for err: its message,
// and its kind when it has one, in source.
func ProbeFailed(source map[string]any, err error) (string, map[string]any, []byte) {
	source["error"] = capstan.ErrorMessage(err)
	var e *Error
	if errors.As(err, &e) {
		source["error_kind"] = e.Kind
	}
	return capstan.EvidenceFailed, source, nil
}

// SSHAccess is the capability a compute node provides to be reached.
const SSHAccess = capstan.SSHAccess

// Resources reads catalog resources by key.
type Resources interface {
	GetResourceByKey(ctx context.Context, org, key string) (*capstan.Resource, error)
}

// PlanTarget is the target a plan's requirement req is bound to: the
// resolved binding's provider, read from resources, as TargetOf reads it.
func PlanTarget(ctx context.Context, resources Resources, secrets Secrets, org string, plan *capstan.Plan, req string) (*Target, error) {
	var b *capstan.ResourceBinding
	if plan != nil {
		b = plan.Binding(req)
	}
	if b == nil || b.Status != capstan.BindingResolved || b.Provider == nil {
		return nil, capstan.Errorf(capstan.EINVALID, "target %s is not a resolved binding of the plan", req)
	}
	r, err := resources.GetResourceByKey(ctx, org, b.Provider.ResourceKey)
	if err != nil {
		return nil, err
	}
	return TargetOf(ctx, secrets, org, req, r)
}

// TargetOf reads a target from a compute node's ssh.access attributes,
// its credentials from secrets (org's): what a job's binding req, or a
// health assessment's runs_on relationship, reaches.
func TargetOf(ctx context.Context, secrets Secrets, org, req string, r *capstan.Resource) (*Target, error) {
	pc := r.Provides(SSHAccess)
	if pc == nil {
		if kc := r.Provides(capstan.KubernetesCluster); kc != nil {
			return clusterOf(ctx, secrets, org, req, r, kc)
		}
		if sc := r.Provides(capstan.ObjectStorageS3); sc != nil && sc.Attributes["endpoint"] != nil {
			return storeOf(ctx, secrets, org, req, r, sc)
		}
		return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s provides neither %s, %s nor an %s with an endpoint", req, r.Key(), SSHAccess, capstan.KubernetesCluster, capstan.ObjectStorageS3)
	}
	attr := func(k string) string {
		v, _ := pc.Attributes[k].(string)
		return strings.TrimSpace(v)
	}
	t := &Target{Requirement: req, Resource: r.Key(), Address: attr("address"), User: attr("user"), Port: 22}
	switch p := pc.Attributes["port"].(type) {
	case float64:
		t.Port = int(p)
	case int:
		t.Port = p
	case int64:
		t.Port = int(p)
	case string:
		if n, err := strconv.Atoi(p); err == nil {
			t.Port = n
		}
	}
	keys, err := sshaccess.HostKeys(attr("host_key"))
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s's ssh.access host_key: %v", req, r.Key(), err)
	}
	t.HostKeys = keys
	switch {
	case t.Address == "":
		return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s has no address", req, r.Key())
	case t.User == "":
		return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s has no ssh user", req, r.Key())
	}
	// The catalog held these to the same rules at import; a resource
	// written otherwise (restored, or from before the rules) meets them
	// here. Which addresses may be dialled is the egress allow-list's to
	// say, at the dial.
	everyAddress := func(netip.Addr) bool { return true }
	for _, err := range []error{sshaccess.Address(t.Address, everyAddress), sshaccess.Port(t.Port), sshaccess.User(t.User)} {
		if err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s's ssh.access: %v", req, r.Key(), err)
		}
	}
	for k, into := range map[string]*[]byte{"private_key": &t.Key, "certificate": &t.Certificate} {
		ref := attr(k)
		if ref == "" {
			continue
		}
		if !strings.HasPrefix(ref, secret.RefPrefix) {
			return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s's %s is not a secret: reference", req, r.Key(), k)
		}
		v, err := SecretValue(ctx, secrets, org, "target "+req+" "+k, ref)
		if err != nil {
			return nil, err
		}
		*into = []byte(v)
	}
	if t.Key == nil {
		return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s has no private_key (a secret: reference) in ssh.access", req, r.Key())
	}
	return t, nil
}

// A RemoteProbe checks the state of a target host. Its source says what
// it observed; the prober adds where (host, address).
type RemoteProbe interface {
	Probe(ctx context.Context, pr capstan.Probe, t *Target) (result string, source map[string]any, output []byte)
}

// A DriftProbe is a remote probe that also compares what a resource's
// operations applied (its desired state's applied_objects) with the
// live state (a kubernetes probe with drift: true). Its source's "drift"
// lists the drifted fields: field, desired, observed, changed_by.
type DriftProbe interface {
	Drift(ctx context.Context, pr capstan.Probe, t *Target, applied any) (result string, source map[string]any, output []byte)
}

// A Prober runs one evidence probe of a node against its target: its
// verdict, what it observed (evidence source), and the raw output (kept as
// a diagnostics artifact, never inlined). executor/probe has the one.
type Prober interface {
	Run(ctx context.Context, pr capstan.Probe, t ProbeTarget) (result string, source map[string]any, output []byte)
}

// ProbeTarget is what a probe runs against: the sandbox and environment
// of its node, and the operation's organization and resource (the default
// of a resource_state probe that names none).
type ProbeTarget struct {
	Org, Resource, Dir string
	// Outputs is the operation's artifacts directory.
	Outputs string
	Env     map[string]string
	// Providers are the resource keys bound to the plan's requirements;
	// Made are the capabilities the operation's succeeded nodes made
	// (capability probes).
	Providers map[string]string
	Made      []string
	// Hosts are the node's targets by requirement (remote probes).
	Hosts map[string]*Target
	// Desired is the desired state a probe that observes a field checks
	// its value against (the scenario's, or the resource's own).
	Desired map[string]any
}

// storeOf reads an object store target from an object_storage.s3
// capability's attributes: its endpoint and its keys' references,
// resolved from secrets.
func storeOf(ctx context.Context, secrets Secrets, org, req string, r *capstan.Resource, pc *capstan.ProvidedCapability) (*Target, error) {
	// The catalog held these to the same rules at import; which
	// addresses may be dialled is the egress allow-list's to say.
	if err := s3access.Check(pc.Attributes, func(netip.Addr) bool { return true }); err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s's %s: %v", req, r.Key(), capstan.ObjectStorageS3, err)
	}
	s := &Store{Endpoint: strings.TrimSpace(pc.Attributes["endpoint"].(string))}
	for _, k := range []struct {
		name string
		dst  *[]byte
	}{{"access_key", &s.AccessKey}, {"secret_key", &s.SecretKey}} {
		v, err := SecretValue(ctx, secrets, org, fmt.Sprintf("%s's %s", r.Key(), k.name), pc.Attributes[k.name].(string))
		if err != nil {
			return nil, err
		}
		*k.dst = []byte(v)
	}
	return &Target{Store: s, Requirement: req, Resource: r.Key()}, nil
}

// clusterOf reads a cluster target from a kubernetes.cluster
// capability's attributes: an https api_server, the pinned ca, and the
// credentials reference, resolved from secrets.
func clusterOf(ctx context.Context, secrets Secrets, org, req string, r *capstan.Resource, pc *capstan.ProvidedCapability) (*Target, error) {
	attr := func(k string) string {
		v, _ := pc.Attributes[k].(string)
		return strings.TrimSpace(v)
	}
	c := &Cluster{Server: attr("api_server"), CA: []byte(attr("ca"))}
	// The catalog held these to the same rules at import; which
	// addresses may be dialled is the egress allow-list's to say, at the
	// dial.
	everyAddress := func(netip.Addr) bool { return true }
	for _, err := range []error{kubeaccess.APIServer(c.Server, everyAddress), kubeaccess.CA(string(c.CA))} {
		if err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s's %s: %v", req, r.Key(), capstan.KubernetesCluster, err)
		}
	}
	ref := attr("credentials")
	if !strings.HasPrefix(ref, secret.RefPrefix) {
		return nil, capstan.Errorf(capstan.EINVALID, "target %s: %s's credentials are not a secret: reference", req, r.Key())
	}
	token, err := SecretValue(ctx, secrets, org, "target "+req+" credentials", ref)
	if err != nil {
		return nil, err
	}
	c.Token = []byte(strings.TrimSpace(token))
	return &Target{Requirement: req, Resource: r.Key(), Cluster: c}, nil
}

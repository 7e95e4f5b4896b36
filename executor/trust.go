package executor

import (
	"context"
	"maps"
	"slices"

	"golang.org/x/crypto/ssh"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
	"github.com/capstan-dev/capstan/executor/job"
)

// EventHostKeyTrusted is the timeline event of a host key trusted on its
// first use: where a pack asked for it (trust_on_first_use), the key a
// host with none pinned presented, now pinned on its compute node.
const EventHostKeyTrusted = "host_key.trusted"

// trusted is a host key an attempt trusted on first use: the compute
// node with the key pinned (nil when someone pinned one meanwhile) and
// what the audit event says.
type trusted struct {
	node  *capstan.Resource
	event event.HostKeyTrusted
}

// trustOnFirstUse marks the job's target as trusting a first host key
// when its run spec asks for it.
func trustOnFirstUse(spec capstan.RunSpec, t *job.Target) {
	if t != nil && spec.TrustOnFirstUse && spec.Runner == "ssh" {
		t.TrustOnFirstUse = true
	}
}

// trustedKeys reads, for each target that trusted a key on first use,
// its compute node with the key pinned in ssh.access, and the event.
func (l *loop) trustedKeys(ctx context.Context, node string, hosts map[string]*job.Target) []trusted {
	var out []trusted
	for _, req := range slices.Sorted(maps.Keys(hosts)) {
		t := hosts[req]
		if t == nil || t.Learned == "" {
			continue
		}
		tr := trusted{event: event.HostKeyTrusted{Node: node, Target: req, Host: t.Resource, Address: t.Address, Key: t.Learned}}
		if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(t.Learned)); err == nil {
			tr.event.Fingerprint = ssh.FingerprintSHA256(k)
		}
		r, err := l.e.cfg.Store.GetResourceByKey(ctx, l.org, t.Resource)
		if err == nil {
			tr.node = pinHostKey(r, t.Learned)
		}
		if tr.node == nil {
			tr.event.Note = "the compute node has a pinned host key now: it is kept"
		}
		out = append(out, tr)
	}
	return out
}

// pinHostKey returns r with key as its ssh.access host_key, or nil when
// r pins one already (or provides no ssh.access).
func pinHostKey(r *capstan.Resource, key string) *capstan.Resource {
	i := slices.IndexFunc(r.ProvidedCapabilities, func(pc capstan.ProvidedCapability) bool { return pc.Capability == job.SSHAccess })
	if i < 0 {
		return nil
	}
	if v, _ := r.ProvidedCapabilities[i].Attributes["host_key"].(string); v != "" {
		return nil
	}
	next := *r
	next.ProvidedCapabilities = slices.Clone(r.ProvidedCapabilities)
	attrs := maps.Clone(next.ProvidedCapabilities[i].Attributes)
	if attrs == nil {
		attrs = map[string]any{}
	}
	attrs["host_key"] = key
	next.ProvidedCapabilities[i].Attributes = attrs
	return &next
}

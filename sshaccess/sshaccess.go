// Package sshaccess holds the rules for a compute node's ssh.access
// fields — address, port, user, pinned host keys — that reach a command
// line, an inventory or a known_hosts file. The catalog checks them at
// import and the executor again at use (a resource written before these
// rules, or restored from a backup, meets them there): one rule, two
// doors.
package sshaccess

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/capstan-dev/capstan/netguard"
	"github.com/capstan-dev/capstan/secret"
)

// MaxHostKeys bounds the host keys one node pins.
const MaxHostKeys = 16

// hostLabel is one label of an RFC 1123 host name.
var hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// userName is a portable user name (POSIX's portable file name set, not
// starting with a hyphen), as useradd accepts by default.
var userName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// Address checks a node's address: an IP literal or an RFC 1123 host
// name (letters, digits, hyphens, dots; no trailing dot, nothing a shell
// or ssh would read as an option), and not the host's or the cloud's own
// address (netguard.Sensitive: loopback, link-local, metadata) unless
// allowed says so (the deployment's egress allow-list names it).
func Address(v string, allowed func(netip.Addr) bool) error {
	if a, err := netip.ParseAddr(v); err == nil {
		if a.Zone() != "" {
			return fmt.Errorf("address %q has a zone: name the host by an address without one", v)
		}
		if why := netguard.Sensitive(a); why != "" && (allowed == nil || !allowed(a)) {
			return fmt.Errorf("address %s is %s; it is refused unless the server's egress allow-list names it", v, why)
		}
		return nil
	}
	if v == "" || len(v) > 253 {
		return fmt.Errorf("address %q is not an IP address or a host name of 1 to 253 characters", v)
	}
	labels := strings.Split(v, ".")
	for _, l := range labels {
		if !hostLabel.MatchString(l) {
			return fmt.Errorf("address %q is not an IP address or an RFC 1123 host name (letters, digits, hyphens and dots)", v)
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" {
		return fmt.Errorf("address %q looks like an IP address but is not one", v)
	}
	return nil
}

// Port checks an sshd's port.
func Port(p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("ssh port %d is not between 1 and 65535", p)
	}
	return nil
}

// User checks an ssh user name.
func User(v string) error {
	if !userName.MatchString(v) {
		return fmt.Errorf("ssh user %q is not a portable user name (a lower-case letter or _, then up to 31 of a-z, 0-9, _ and -)", v)
	}
	return nil
}

// HostKeys reads pinned host keys, one authorized-keys line each ("type
// base64", an optional comment; no options, no host patterns, no
// markers), and returns them in their canonical form ("type base64"),
// the only form written to a known_hosts file.
func HostKeys(text string) ([]string, error) {
	var out []string
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, err := HostKey(line)
		if err != nil {
			return nil, fmt.Errorf("host key line %d: %w", i+1, err)
		}
		out = append(out, key)
	}
	if len(out) > MaxHostKeys {
		return nil, fmt.Errorf("%d host keys: at most %d", len(out), MaxHostKeys)
	}
	return out, nil
}

// HostKey checks one pinned host key line and returns its canonical form.
func HostKey(line string) (string, error) {
	if strings.ContainsAny(line, "\r\n\x00") {
		return "", fmt.Errorf("a host key is one line")
	}
	fields := strings.Fields(line)
	if len(fields) < 2 {
		return "", fmt.Errorf("a host key is \"type base64\" (ssh-ed25519 AAAA…)")
	}
	key, _, options, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	switch {
	case err != nil:
		return "", fmt.Errorf("not a public key in authorized_keys format: %v", err)
	case len(options) > 0 || len(rest) > 0:
		return "", fmt.Errorf("a host key is one key without options")
	case key.Type() != fields[0]:
		return "", fmt.Errorf("a host key starts with its type (%s), nothing before it", key.Type())
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))), nil
}

// SecretRef checks a credential field: a secret:<name> reference, never a
// value. The name is looked up in the resource's own organization only
// (the secret store is keyed by organization and name: secret:globex/key
// in acme is acme's secret "globex/key", never globex's "key").
func SecretRef(v string) error {
	if _, ok := secret.ParseRef(v); !ok {
		return fmt.Errorf("%q is not a secret:<name> reference (lower-case letters, digits, '.', '_', '-' and '/')", v)
	}
	return nil
}

// HostURL checks a URL that names a host and nothing more (a cluster's
// api_server, an object store's endpoint), field naming it in errors:
// one of schemes, a host (and port), no user, path, query or fragment,
// the host an Address (allow as there), the port a port.
func HostURL(field, raw string, allow func(netip.Addr) bool, schemes ...string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case raw == "":
		return fmt.Errorf("%s is empty", field)
	case err != nil:
		return fmt.Errorf("%s %q is not a URL", field, raw)
	case !slices.Contains(schemes, u.Scheme):
		return fmt.Errorf("%s %q is not %s", field, raw, strings.Join(schemes, " or "))
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%s %q must be %s://host[:port] and nothing more", field, raw, u.Scheme)
	}
	if err := Address(u.Hostname(), allow); err != nil {
		return fmt.Errorf("%s: %v", field, err)
	}
	if port := u.Port(); port != "" {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("%s %q has a bad port", field, raw)
		}
	}
	return nil
}

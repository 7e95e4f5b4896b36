package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/netguard"
)

// Egress is the allow-list of the server's own outbound calls (`http`
// jobs and probes). An entry is a CIDR or address (10.0.0.0/8,
// 192.0.2.7), a host name (api.example.com) or a wildcard of host names
// (*.example.com). A call may go to an address inside a listed CIDR, or
// to a listed host — unless that host resolves to a loopback,
// link-local (cloud metadata), unspecified or multicast address, which
// only a CIDR entry containing it allows. The check is made on the
// address actually dialled (no DNS rebinding), on every redirect too.
type Egress struct {
	prefixes []netip.Prefix
	hosts    []string
}

// ParseEgress reads an allow-list; an empty one allows nothing.
func ParseEgress(entries []string) (*Egress, error) {
	e := &Egress{}
	var bad []string
	for _, raw := range entries {
		s := strings.ToLower(strings.TrimSpace(raw))
		switch {
		case s == "":
		case strings.Contains(s, "/"):
			p, err := netip.ParsePrefix(s)
			if err != nil {
				bad = append(bad, raw)
				continue
			}
			e.prefixes = append(e.prefixes, p.Masked())
		default:
			if a, err := netip.ParseAddr(s); err == nil {
				e.prefixes = append(e.prefixes, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			if _, err := path.Match(s, "x"); err != nil || strings.ContainsAny(s, ":[]") {
				bad = append(bad, raw)
				continue
			}
			e.hosts = append(e.hosts, s)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("egress allow-list: %q are neither CIDRs, addresses nor host names", bad)
	}
	return e, nil
}

// Allows decides one dial: host as the URL names it, addr as resolved.
// A sensitive address needs a CIDR of its own (not 0.0.0.0/0 or ::/0, which
// allow everything else).
func (e *Egress) Allows(host string, addr netip.Addr) error {
	addr = addr.Unmap()
	for _, p := range e.prefixes {
		if !p.Contains(addr) && !p.Contains(netguard.Embedded(addr)) {
			continue
		}
		if netguard.Sensitive(addr) != "" && p.Bits() < 8 {
			continue
		}
		return nil
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, pattern := range e.hosts {
		if ok, _ := path.Match(pattern, host); ok {
			if netguard.Sensitive(addr) != "" || netguard.Internal(addr) {
				return capstan.Errorf(capstan.EFORBIDDEN, "egress: %s resolves to %s, a loopback, link-local, metadata or private address that no CIDR of the allow-list lists", host, addr)
			}
			return nil
		}
	}
	return capstan.Errorf(capstan.EFORBIDDEN, "egress: %s (%s) is not in the allow-list (--egress-allow)", host, addr)
}

// DialContext dials address (host:port) at the first of its resolved
// addresses the allow-list allows: the one check for every outbound call
// of the server (http jobs and probes, ssh and tcp to targets).
func (e *Egress) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	var refused error
	for _, a := range addrs {
		if err := e.Allows(host, a); err != nil {
			refused = err
			continue
		}
		dialer := &net.Dialer{Timeout: 10 * time.Second}
		return dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
	}
	if refused == nil {
		refused = fmt.Errorf("egress: %s has no address", host)
	}
	return nil, refused
}

// Client returns an HTTP client that dials only what the allow-list
// allows, ignores proxy settings of the environment, and follows at most
// five redirects (each dial checked again).
func (e *Egress) Client() *http.Client {
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           e.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{Transport: transport, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("egress: more than 5 redirects")
		}
		return nil
	}}
}

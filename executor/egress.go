package executor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
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

// metadata are cloud metadata and platform addresses outside the
// link-local ranges (Alibaba, AWS IPv6, GCP IPv6, Azure's wire server).
var metadata = []netip.Addr{netip.MustParseAddr("100.100.100.200"), netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("fd20:ce::254"), netip.MustParseAddr("168.63.129.16")}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
)

// embedded is the IPv4 address an IPv6 one carries (mapped, NAT64,
// 6to4), or the address itself.
func embedded(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if !a.Is6() {
		return a
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return a
}

// sensitive addresses are the host's and the cloud's own: loopback,
// link-local (metadata), unspecified, multicast, the metadata addresses.
func sensitive(a netip.Addr) bool {
	for _, x := range []netip.Addr{a.Unmap(), embedded(a)} {
		if slices.Contains(metadata, x) || x.IsLoopback() || x.IsLinkLocalUnicast() || x.IsLinkLocalMulticast() ||
			x.IsUnspecified() || x.IsMulticast() || x.IsInterfaceLocalMulticast() {
			return true
		}
	}
	return false
}

// internal addresses are private networks (RFC 1918, ULA, CGNAT): a
// listed host name that resolves there — or is rebound there — reaches
// them only when a CIDR lists them too.
func internal(a netip.Addr) bool {
	for _, x := range []netip.Addr{a.Unmap(), embedded(a)} {
		if x.IsPrivate() || cgnat.Contains(x) {
			return true
		}
	}
	return false
}

// Allows decides one dial: host as the URL names it, addr as resolved.
// A sensitive address needs a CIDR of its own (not 0.0.0.0/0 or ::/0, which
// allow everything else).
func (e *Egress) Allows(host string, addr netip.Addr) error {
	addr = addr.Unmap()
	for _, p := range e.prefixes {
		if !p.Contains(addr) && !p.Contains(embedded(addr)) {
			continue
		}
		if sensitive(addr) && p.Bits() < 8 {
			continue
		}
		return nil
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, pattern := range e.hosts {
		if ok, _ := path.Match(pattern, host); ok {
			if sensitive(addr) || internal(addr) {
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

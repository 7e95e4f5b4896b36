// Package kubeaccess holds the rules of how a cluster is reached, written
// once for the catalog that imports a cluster and the runner that dials
// it: an https API server URL of a host and nothing else, and a pinned
// certificate authority, never a skipped check.
package kubeaccess

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/capstan-dev/capstan/sshaccess"
)

// APIServer checks a cluster's api_server: an https URL of a host (and
// port), with no user, path, query or fragment, whose host meets the
// rules of a node's address (sshaccess.Address: a host name or an
// address, the host's or the cloud's own only when allow says so).
func APIServer(raw string, allow func(netip.Addr) bool) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case raw == "":
		return errors.New("api_server is empty")
	case err != nil:
		return fmt.Errorf("api_server %q is not a URL", raw)
	case u.Scheme != "https":
		return fmt.Errorf("api_server %q is not https: Capstan speaks to a cluster only over TLS", raw)
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("api_server %q must be https://host[:port] and nothing more", raw)
	}
	if err := sshaccess.Address(u.Hostname(), allow); err != nil {
		return fmt.Errorf("api_server: %v", err)
	}
	if port := u.Port(); port != "" {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("api_server %q has a bad port", raw)
		}
	}
	return nil
}

// CA checks a cluster's ca: one or more PEM certificates, each parsing.
func CA(data string) error {
	rest := []byte(strings.TrimSpace(data))
	n := 0
	for len(rest) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("ca holds a %s: only certificates", block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("ca: %v", err)
		}
		n++
		rest = []byte(strings.TrimSpace(string(rest)))
	}
	if n == 0 || len(rest) > 0 {
		return errors.New("ca is not PEM certificates: the cluster's certificate authority is pinned, never skipped")
	}
	return nil
}

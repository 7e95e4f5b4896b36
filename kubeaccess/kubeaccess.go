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
	"net/netip"
	"strings"

	"github.com/capstan-dev/capstan/sshaccess"
)

// APIServer checks a cluster's api_server: an https URL of a host (and
// port) and nothing more, whose host meets the rules of a node's address
// (sshaccess.HostURL): Capstan speaks to a cluster only over TLS.
func APIServer(raw string, allow func(netip.Addr) bool) error {
	return sshaccess.HostURL("api_server", raw, allow, "https")
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

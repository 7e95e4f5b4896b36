// Package s3access holds the rules of how an S3 endpoint is reached,
// written once for the catalog that imports an object store and the
// runner and probe that dial it: an http or https URL of a host and
// nothing else, and its keys as secret: references.
package s3access

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/capstan-dev/capstan/sshaccess"
)

// Endpoint checks an object store's endpoint: an http or https URL of a
// host (and port) and nothing more, whose host meets the rules of a
// node's address (sshaccess.HostURL).
func Endpoint(raw string, allow func(netip.Addr) bool) error {
	return sshaccess.HostURL("endpoint", raw, allow, "http", "https")
}

// Attributes are the object_storage.s3 attributes that say how Capstan
// reaches a store: all three, or none (a store no real step reaches).
var Attributes = []string{"endpoint", "access_key", "secret_key"}

// Check holds an object_storage.s3 capability's reach attributes to the
// rules: all or none; the endpoint an Endpoint; the keys secret:
// references.
func Check(attrs map[string]any, allow func(netip.Addr) bool) error {
	set := 0
	for _, k := range Attributes {
		if s, _ := attrs[k].(string); s != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return nil
	case set < len(Attributes):
		return errors.New("endpoint, access_key and secret_key go together: a store Capstan reaches needs all three")
	}
	if err := Endpoint(attrs["endpoint"].(string), allow); err != nil {
		return err
	}
	for _, k := range Attributes[1:] {
		if err := sshaccess.SecretRef(attrs[k].(string)); err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
	}
	return nil
}

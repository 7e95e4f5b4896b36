package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// FieldManager is the name Capstan applies under: the API server records
// which fields it owns (managedFields), and drift is read against them.
const FieldManager = "capstan"

// Dialer dials the API server: the egress allow-list's DialContext.
type Dialer func(ctx context.Context, network, address string) (net.Conn, error)

// Client is one cluster as a job reaches it.
type Client struct {
	Dynamic dynamic.Interface
	Mapper  meta.ResettableRESTMapper
	// Server names the cluster in errors and evidence.
	Server string
}

// Connect makes a client of a cluster target (RESTConfig).
func Connect(c *job.Cluster, dial Dialer) (*Client, error) {
	if c == nil {
		return nil, capstan.Errorf(capstan.EINVALID, "the target is not a cluster")
	}
	return connect(c, RESTConfig(c, dial))
}

// RESTConfig is client-go's configuration of a cluster target: its
// pinned CA, its token, dialled through dial (nil: refuse every dial, so
// nothing reaches a cluster without an allow-list), and no proxy.
func RESTConfig(c *job.Cluster, dial Dialer) *rest.Config {
	if dial == nil {
		dial = func(context.Context, string, string) (net.Conn, error) {
			return nil, capstan.Errorf(capstan.EFORBIDDEN, "this server has no egress allow-list: it dials no cluster")
		}
	}
	return &rest.Config{
		Host:            c.Server,
		BearerToken:     string(c.Token),
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CA},
		Dial:            dial,
		UserAgent:       "capstan",
		QPS:             50,
		Burst:           100,
		// The environment's proxy is not the allow-list's to trust.
		Proxy: func(*http.Request) (*url.URL, error) { return nil, nil },
	}
}

// connect is Connect's second half: the clients of a configuration.
func connect(c *job.Cluster, cfg *rest.Config) (*Client, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "cluster %s: %v", c.Server, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "cluster %s: %v", c.Server, err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return &Client{Dynamic: dyn, Mapper: mapper, Server: c.Server}, nil
}

// resource finds where an object of gvk lives in the API, and whether
// it is namespaced.
func (c *Client) resource(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset() // a CRD applied a moment ago
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if meta.IsNoMatchError(err) {
		return nil, &Error{Kind: ErrKindInvalid, Err: capstan.Errorf(capstan.EINVALID, "cluster %s serves no %s", c.Server, gvk)}
	}
	if err != nil {
		return nil, Classify(c.Server, "discovering "+gvk.String(), err)
	}
	return m, nil
}

// Error kinds of the runner's failures (job.Result.ErrKind): the retry
// policy reads them, and forbidden, invalid and conflict are never
// retried, for another attempt would meet the same RBAC, the same schema
// or the same other manager.
const (
	ErrKindForbidden    = job.ErrKindForbidden
	ErrKindInvalid      = job.ErrKindInvalid
	ErrKindConflict     = job.ErrKindConflict
	ErrKindUnauthorized = "unauthorized"
	ErrKindUnavailable  = job.ErrKindUnavailable
	ErrKindTimeout      = "timeout"
	ErrKindFailed       = "failed"
)

// Error is a failure of the runner with its kind.
type Error = job.Error

// Classify types an API error: the server's own message, the code
// Capstan's API answers with, and the kind the retry policy reads.
func Classify(server, doing string, err error) error {
	var ke *Error
	if errors.As(err, &ke) {
		return err
	}
	msg := fmt.Sprintf("cluster %s: %s: %s", server, doing, apiMessage(err))
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &verify) {
		// Not the cluster the catalog pinned: no attempt will make it so.
		return &Error{Kind: job.ErrKindTarget, Err: capstan.Errorf(capstan.EFORBIDDEN, "%s (the API server's certificate does not match the ca pinned on the cluster)", msg)}
	}
	switch {
	case apierrors.IsForbidden(err):
		return &Error{Kind: ErrKindForbidden, Err: capstan.Errorf(capstan.EFORBIDDEN, "%s", msg)}
	case apierrors.IsUnauthorized(err):
		return &Error{Kind: ErrKindUnauthorized, Err: capstan.Errorf(capstan.EFORBIDDEN, "%s (the credentials were refused: expired or revoked?)", msg)}
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsUnsupportedMediaType(err), untypable(err):
		return &Error{Kind: ErrKindInvalid, Err: capstan.Errorf(capstan.EINVALID, "%s", msg)}
	case apierrors.IsConflict(err):
		return &Error{Kind: ErrKindConflict, Err: capstan.Errorf(capstan.ECONFLICT, "%s", msg)}
	case apierrors.IsNotFound(err):
		return &Error{Kind: ErrKindInvalid, Err: capstan.Errorf(capstan.ENOTFOUND, "%s", msg)}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: ErrKindTimeout, Err: capstan.Errorf(capstan.EUNAVAILABLE, "%s", msg)}
	}
	var ce *capstan.Error
	if errors.As(err, &ce) && ce.Code == capstan.EFORBIDDEN { // the egress allow-list
		return &Error{Kind: ErrKindForbidden, Err: capstan.Errorf(capstan.EFORBIDDEN, "%s", msg)}
	}
	return &Error{Kind: ErrKindUnavailable, Err: capstan.Errorf(capstan.EUNAVAILABLE, "%s", msg)}
}

// untypable reports whether the server could not type an applied object
// against its schema (a number where a string goes): it answers 500, but
// no attempt will make the object fit.
func untypable(err error) bool {
	return apierrors.IsInternalError(err) && strings.Contains(apiMessage(err), "failed to create typed patch object")
}

// apiMessage is the API server's message, on one line.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	msg := err.Error()
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	return strings.Join(strings.Fields(msg), " ")
}

// refusalSettle is how long a refusal (403 or 401) is asked again before
// it stands: an API server that has just started refuses everyone until
// its authorizer and authenticator caches fill, and a refusal that is
// real is still there after it.
const refusalSettle = 5 * time.Second

// settled runs call, and again while it is refused, for refusalSettle at
// most (or until ctx ends); it returns call's last error.
func settled(ctx context.Context, call func() error) error {
	err := call()
	if err == nil || !(apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) {
		return err
	}
	deadline := time.Now().Add(refusalSettle)
	tick := time.NewTicker(250 * time.Millisecond) // the API server gives no sign when its caches are full
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
		if err = call(); err == nil || !(apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) {
			return err
		}
	}
	return err
}

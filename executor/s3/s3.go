// Package s3 reaches S3 object stores for the executor: the `s3` runner
// (a bucket made, idempotently) and the `s3` probe (a bucket proven
// writable by a real PUT, GET and DELETE), through minio-go, dialled
// only through the egress allow-list. The store is a job.Target's Store:
// an object_storage.s3 resource's endpoint and keys (s3access).
package s3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/kube"
)

// Dialer dials a store (the egress allow-list's DialContext).
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Error kinds of the runner's failures: forbidden (the keys may not) is
// never retried.
const (
	ErrKindForbidden   = job.ErrKindForbidden
	ErrKindInvalid     = job.ErrKindInvalid
	ErrKindUnavailable = job.ErrKindUnavailable
)

// Error is a failure with its kind.
type Error = job.Error

// connect makes a client of a store target, dialled through dial (nil:
// refuse every dial), never through a proxy.
func connect(s *job.Store, dial Dialer) (*minio.Client, error) {
	if s == nil {
		return nil, &Error{Kind: job.ErrKindTarget, Err: capstan.Errorf(capstan.EINVALID, "the target is not an object store")}
	}
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		return nil, &Error{Kind: ErrKindInvalid, Err: capstan.Errorf(capstan.EINVALID, "endpoint %q: %v", s.Endpoint, err)}
	}
	if dial == nil {
		dial = func(context.Context, string, string) (net.Conn, error) {
			return nil, capstan.Errorf(capstan.EFORBIDDEN, "this server has no egress allow-list: it dials no store")
		}
	}
	transport := &http.Transport{DialContext: dial, Proxy: nil, ForceAttemptHTTP2: true}
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(string(s.AccessKey), string(s.SecretKey), ""),
		Secure: u.Scheme == "https", Transport: transport, Region: "us-east-1", BucketLookup: minio.BucketLookupPath, MaxRetries: 1})
	if err != nil {
		return nil, &Error{Kind: ErrKindInvalid, Err: capstan.Errorf(capstan.EINVALID, "endpoint %q: %v", s.Endpoint, err)}
	}
	return c, nil
}

// classify types a store's answer: the code the API answers with, the
// kind the retry policy reads.
func classify(endpoint, doing string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	resp := minio.ToErrorResponse(err)
	msg := fmt.Sprintf("store %s: %s: %s", endpoint, doing, err.Error())
	switch resp.Code {
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled":
		return &Error{Kind: ErrKindForbidden, Err: capstan.Errorf(capstan.EFORBIDDEN, "%s", msg)}
	case "InvalidBucketName", "BucketAlreadyExists":
		return &Error{Kind: ErrKindInvalid, Err: capstan.Errorf(capstan.EINVALID, "%s", msg)}
	}
	var ce *capstan.Error
	if errors.As(err, &ce) && ce.Code == capstan.EFORBIDDEN { // the egress allow-list
		return &Error{Kind: ErrKindForbidden, Err: capstan.Errorf(capstan.EFORBIDDEN, "%s", msg)}
	}
	return &Error{Kind: ErrKindUnavailable, Err: capstan.Errorf(capstan.EUNAVAILABLE, "%s", msg)}
}

// bucketName fills a bucket's placeholders (${param.NAME}, values only,
// as a manifest's) and holds it to S3's strict naming rules.
func bucketName(raw string, env map[string]string) (string, error) {
	ref, err := kube.FillRef(capstan.ObjectRef{Name: raw}, kube.Params(env))
	if err != nil {
		return "", capstan.Errorf(capstan.EINVALID, "bucket: %v", err)
	}
	name := strings.TrimSpace(ref.Name)
	if err := s3utils.CheckValidBucketNameStrict(name); err != nil {
		return "", capstan.Errorf(capstan.EINVALID, "bucket %q: %v", name, err)
	}
	return name, nil
}

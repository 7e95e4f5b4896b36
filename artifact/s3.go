package artifact

import (
	"context"
	"io"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/capstan-dev/capstan"
)

// S3Config says where an S3-compatible object store keeps artifacts.
type S3Config struct {
	// Endpoint is the store's URL: http://host:port or https://host.
	Endpoint string
	// Bucket holds the objects; Open makes it when missing.
	Bucket string
	// AccessKey and SecretKey sign the requests (static credentials).
	AccessKey, SecretKey string
	// Region is the bucket's (default us-east-1).
	Region string
}

// S3 keeps artifacts as objects of one bucket of an S3-compatible store
// (minio-go): every replica that names the same bucket reads them. Its
// references are s3://<bucket>/<key>.
type S3 struct {
	client *minio.Client
	bucket string
}

// OpenS3 connects to the store and makes the bucket when it is missing
// (EUNAVAILABLE when the store does not answer; EINVALID for a bad
// configuration or credentials it refuses).
func OpenS3(ctx context.Context, c S3Config) (*S3, error) {
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, capstan.Errorf(capstan.EINVALID, "the artifact store's endpoint %q is not http(s)://host[:port]", c.Endpoint)
	}
	if c.Bucket == "" || c.AccessKey == "" || c.SecretKey == "" {
		return nil, capstan.Errorf(capstan.EINVALID, "the artifact store needs a bucket and its credentials")
	}
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	client, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure: u.Scheme == "https", Region: region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return nil, capstan.Errorf(capstan.EINVALID, "the artifact store at %s: %v", c.Endpoint, err)
	}
	s := &S3{client: client, bucket: c.Bucket}
	ok, err := client.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, s3Error("reaching the artifact store at "+c.Endpoint, err)
	}
	if !ok {
		if err := client.MakeBucket(ctx, c.Bucket, minio.MakeBucketOptions{Region: region}); err != nil {
			if code := minio.ToErrorResponse(err).Code; code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
				return nil, s3Error("making bucket "+c.Bucket, err)
			}
		}
	}
	return s, nil
}

// Shared is true: every replica that names the bucket reads it.
func (s *S3) Shared() bool { return true }

// Put uploads the object; the store makes it visible whole, or not at all.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64) (string, error) {
	if _, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{ContentType: "application/octet-stream"}); err != nil {
		return "", s3Error("keeping artifact "+key, err)
	}
	return "s3://" + s.bucket + "/" + key, nil
}

// Open reads the object an s3:// reference of this bucket names.
func (s *S3) Open(ctx context.Context, ref string, from, to int64) (io.ReadCloser, error) {
	rest, ok := strings.CutPrefix(ref, "s3://")
	bucket, key, _ := strings.Cut(rest, "/")
	if !ok || bucket != s.bucket || key == "" {
		return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q is not an object of bucket %s", ref, s.bucket)
	}
	var opts minio.GetObjectOptions
	if to > 0 {
		if err := opts.SetRange(from, to-1); err != nil {
			return nil, capstan.Errorf(capstan.EINVALID, "artifact reference %q has a bad range", ref)
		}
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		return nil, s3Error("reading artifact "+key, err)
	}
	if _, err := obj.Stat(); err != nil { // the request itself: a missing object shows here
		obj.Close()
		return nil, s3Error("reading artifact "+key, err)
	}
	return obj, nil
}

// s3Error types an error of the store: a missing object is ENOTFOUND,
// refused credentials EINVALID, anything else (the store down, a
// timeout) EUNAVAILABLE.
func s3Error(what string, err error) error {
	switch minio.ToErrorResponse(err).Code {
	case "NoSuchKey", "NoSuchBucket":
		return capstan.Errorf(capstan.ENOTFOUND, "%s: %v", what, err)
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch":
		return capstan.Errorf(capstan.EINVALID, "%s: the store refused the credentials: %v", what, err)
	}
	return capstan.Errorf(capstan.EUNAVAILABLE, "%s: %v", what, err)
}

package s3_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
	"github.com/capstan-dev/capstan/executor/local"
	"github.com/capstan-dev/capstan/executor/s3"
	"github.com/capstan-dev/capstan/internal/s3test"
)

func loopback(t *testing.T) s3.Dialer {
	t.Helper()
	e, err := local.ParseEgress([]string{"127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	return e.DialContext
}

func store(srv *s3test.Server, secretKey string) *job.Target {
	return &job.Target{Requirement: "object-storage", Resource: "s3.store/lab",
		Store: &job.Store{Endpoint: srv.Endpoint, AccessKey: []byte(s3test.AccessKey), SecretKey: []byte(secretKey)}}
}

func bucketJob(target *job.Target, bucket string) job.Job {
	return job.Job{OperationID: "op-s3", NodeID: "create-bucket", Attempt: 1, Env: map[string]string{"CAPSTAN_PARAM_BUCKET": bucket},
		Spec: capstan.RunSpec{Runner: "s3", Target: "object-storage", Bucket: "${param.bucket}", Timeout: "30s"}, Target: target}
}

func TestABucketIsMadeOnceAndProvenWritable(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	target := store(srv, s3test.SecretKey)
	r := s3.Runner{Dial: loopback(t)}
	ctx := context.Background()

	first := r.Run(ctx, bucketJob(target, "traces"))
	if first.Err != nil || len(first.Evidence) != 1 || first.Evidence[0].Item != "bucket-traces-created" {
		t.Fatalf("first: %v %+v", first.Err, first.Evidence)
	}
	if info, err := os.Stat(filepath.Join(srv.Root, "traces")); err != nil || !info.IsDir() {
		t.Fatalf("the server has no bucket traces: %v", err)
	}
	again := r.Run(ctx, bucketJob(target, "traces"))
	if again.Err != nil || again.Evidence[0].Item != "bucket-traces-exists" {
		t.Fatalf("a re-run: %v %+v", again.Err, again.Evidence)
	}

	p := s3.Probe{Dial: loopback(t)}
	result, source, _ := p.Probe(ctx, capstan.Probe{Name: "bucket-writable", Type: "s3", Target: "object-storage", Bucket: "traces"}, target)
	if result != capstan.EvidencePassed || source["read_back"] != true || source["deleted"] != true || source["etag"] == "" {
		t.Fatalf("%s %v", result, source)
	}
	key, _ := source["key"].(string)
	if !strings.HasPrefix(key, "capstan-probe/") {
		t.Fatalf("key = %q", key)
	}
	if _, err := os.Stat(filepath.Join(srv.Root, "traces", key)); !os.IsNotExist(err) {
		t.Fatalf("the probe's object is still on the server's disk: %v", err)
	}

	t.Run("a bucket that is not there fails the probe with why", func(t *testing.T) {
		result, source, _ := p.Probe(ctx, capstan.Probe{Name: "bucket-writable", Type: "s3", Target: "object-storage", Bucket: "nowhere"}, target)
		if result != capstan.EvidenceFailed || !strings.Contains(source["error"].(string), "bucket does not exist") {
			t.Fatalf("%s %v", result, source)
		}
	})
	t.Run("keys the store refuses are forbidden, typed, never retried", func(t *testing.T) {
		res := r.Run(ctx, bucketJob(store(srv, "not-the-secret-key"), "other"))
		if res.ErrKind != s3.ErrKindForbidden || capstan.ErrorCode(res.Err) != capstan.EFORBIDDEN {
			t.Fatalf("%s %v", res.ErrKind, res.Err)
		}
		result, source, _ := p.Probe(ctx, capstan.Probe{Name: "w", Type: "s3", Target: "object-storage", Bucket: "traces"}, store(srv, "not-the-secret-key"))
		if result != capstan.EvidenceFailed || source["error_kind"] != s3.ErrKindForbidden {
			t.Fatalf("%s %v", result, source)
		}
	})
	t.Run("a bucket name S3 refuses is invalid before any request", func(t *testing.T) {
		for _, name := range []string{"No_Caps", "a", "../../etc", "192.168.1.1"} {
			res := r.Run(ctx, bucketJob(target, name))
			if res.ErrKind != s3.ErrKindInvalid || capstan.ErrorCode(res.Err) != capstan.EINVALID {
				t.Fatalf("%q: %s %v", name, res.ErrKind, res.Err)
			}
		}
	})
	t.Run("no store is dialled outside the allow-list", func(t *testing.T) {
		res := s3.Runner{}.Run(ctx, bucketJob(target, "elsewhere"))
		if res.ErrKind != s3.ErrKindForbidden || !strings.Contains(res.Err.Error(), "egress allow-list") {
			t.Fatalf("%s %v", res.ErrKind, res.Err)
		}
	})
	t.Run("a target that is no store is refused", func(t *testing.T) {
		res := r.Run(ctx, bucketJob(&job.Target{Resource: "compute.node/h1", Address: "127.0.0.1"}, "x-bucket"))
		if res.ErrKind != job.ErrKindTarget {
			t.Fatalf("%s %v", res.ErrKind, res.Err)
		}
	})
}

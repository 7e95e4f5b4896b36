package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/executor/job"
)

// ProbeTimeout bounds one probe's requests.
const ProbeTimeout = 30 * time.Second

// probeBytes is the size of the object a probe writes.
const probeBytes = 64

// Probe proves a bucket writable on the probe's target store: the `s3`
// probe type. It PUTs an object of random bytes under capstan-probe/, GETs
// it back and compares, DELETEs it and checks it is gone. Its source
// records the endpoint, the bucket, the key and the object's ETag; what
// failed says where.
type Probe struct {
	Dial Dialer
}

// Probe implements job.RemoteProbe. The bucket's placeholders were
// filled by the prober (executor/probe).
func (p Probe) Probe(ctx context.Context, pr capstan.Probe, t *job.Target) (string, map[string]any, []byte) {
	source := map[string]any{"bucket": pr.Bucket}
	if t.Store == nil {
		source["note"] = "an s3 probe needs an object store target"
		return capstan.EvidenceFailed, source, nil
	}
	source["endpoint"] = t.Store.Endpoint
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	client, err := connect(t.Store, p.Dial)
	if err != nil {
		return noted(source, err)
	}
	want := make([]byte, probeBytes)
	_, _ = rand.Read(want)
	key := "capstan-probe/" + hex.EncodeToString(want[:8])
	source["key"] = key
	info, err := client.PutObject(ctx, pr.Bucket, key, bytes.NewReader(want), int64(len(want)), minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return noted(source, classify(t.Store.Endpoint, "putting "+key, err))
	}
	source["etag"] = info.ETag
	obj, err := client.GetObject(ctx, pr.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return noted(source, classify(t.Store.Endpoint, "getting "+key, err))
	}
	got, err := io.ReadAll(io.LimitReader(obj, probeBytes+1))
	obj.Close()
	if err != nil {
		return noted(source, classify(t.Store.Endpoint, "reading "+key, err))
	}
	source["read_back"] = bytes.Equal(got, want)
	if err := client.RemoveObject(ctx, pr.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return noted(source, classify(t.Store.Endpoint, "deleting "+key, err))
	}
	_, err = client.StatObject(ctx, pr.Bucket, key, minio.StatObjectOptions{})
	gone := minio.ToErrorResponse(err).Code == "NoSuchKey"
	source["deleted"] = gone
	if !bytes.Equal(got, want) {
		source["note"] = "the object read back is not the one written"
		return capstan.EvidenceFailed, source, nil
	}
	if !gone {
		source["note"] = "the object is still there after its DELETE"
		return capstan.EvidenceFailed, source, nil
	}
	return capstan.EvidencePassed, source, nil
}

func noted(source map[string]any, err error) (string, map[string]any, []byte) {
	return job.ProbeFailed(source, err)
}

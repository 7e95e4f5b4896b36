package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/artifact"
)

// artifactFlags say where artifacts are kept: on this replica's disk (the
// default), or in a bucket of an S3-compatible store every replica
// reads. The store's credentials come from the environment only
// (CAPSTAN_ARTIFACT_ACCESS_KEY, CAPSTAN_ARTIFACT_SECRET_KEY): a flag
// would show them to anyone who lists the machine's processes.
type artifactFlags struct {
	store, endpoint, region string
}

// openArtifacts opens the artifact store the flags name, with dir (the
// executor's directory) for what this replica keeps on its disk.
func openArtifacts(ctx context.Context, f artifactFlags, storeKind, dir string, log *slog.Logger) (artifact.Store, error) {
	local := artifact.Dir{Root: dir}
	if f.store == "" {
		if storeKind == "neo4j" {
			log.Warn("artifacts are kept on this replica's disk: replicas of one Neo4j read one another's only from a shared store (--artifact-store s3://<bucket>)")
		}
		return local, nil
	}
	bucket, ok := strings.CutPrefix(f.store, "s3://")
	if !ok || bucket == "" || strings.Contains(bucket, "/") {
		return nil, capstan.Errorf(capstan.EINVALID, "--artifact-store %q is not s3://<bucket>", f.store)
	}
	if f.endpoint == "" {
		return nil, capstan.Errorf(capstan.EINVALID, "--artifact-store %s needs --artifact-endpoint, the store's http(s)://host:port", f.store)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s3, err := artifact.OpenS3(ctx, artifact.S3Config{Endpoint: f.endpoint, Bucket: bucket, Region: f.region,
		AccessKey: os.Getenv("CAPSTAN_ARTIFACT_ACCESS_KEY"), SecretKey: os.Getenv("CAPSTAN_ARTIFACT_SECRET_KEY")})
	if err != nil {
		return nil, err
	}
	log.Info("artifacts are kept in the object store", "endpoint", f.endpoint, "bucket", bucket)
	return artifact.Stores{Keep: s3, Local: local}, nil
}

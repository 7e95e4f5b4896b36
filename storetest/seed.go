package storetest

// SeedExplanations is the expected resolution of the seed's example on the
// demo catalog: every binding and every candidate with its reason.
var SeedExplanations = map[string]string{
	"cluster": "resolved | kubernetes.cluster/prod-k8s provides kubernetes.cluster and meets every constraint and policy; 1 of 3 candidates accepted, ranked first",
	"cluster <- kubernetes.cluster/legacy-k8s":  "rejected: lifecycle: want active, got degraded; name: want prod-k8s, got legacy-k8s",
	"cluster <- kubernetes.cluster/prod-k8s":    "selected: meets every constraint and policy and ranks first",
	"cluster <- kubernetes.cluster/staging-k8s": "rejected: environment: want prod, got staging; name: want prod-k8s, got staging-k8s",
	"object-storage": "pending_sub_operation | no existing provider qualified (4 considered); minio.install@1.0.0 will create one that meets the constraints and policies",
	"object-storage <- minio.instance/old-prod-storage":        "rejected: lifecycle: want active, got deleted",
	"object-storage <- minio.instance/shared-prod-storage":     "rejected by policy prod-object-storage-dedicated: Production object storage must be dedicated to one workload: its access_mode is shared.",
	"object-storage <- minio.instance/staging-storage":         "rejected: environment: want prod, got staging",
	"object-storage <- s3.bucket/archive-us-east":              "rejected: region: want eu-central, got us-east",
	"object-storage <- minio.install@1.0.0":                    "selected: meets every constraint and policy and ranks first",
	"object-storage/cluster":                                   "resolved | kubernetes.cluster/prod-k8s provides kubernetes.cluster and meets every constraint and policy; 1 of 3 candidates accepted, ranked first",
	"object-storage/cluster <- kubernetes.cluster/legacy-k8s":  "rejected: lifecycle: want active, got degraded; name: want prod-k8s, got legacy-k8s",
	"object-storage/cluster <- kubernetes.cluster/prod-k8s":    "selected: meets every constraint and policy and ranks first",
	"object-storage/cluster <- kubernetes.cluster/staging-k8s": "rejected: environment: want prod, got staging; name: want prod-k8s, got staging-k8s",
	"secrets":                                 "resolved | vault.instance/prod-vault provides secret.store and meets every constraint and policy; 1 of 3 candidates accepted, ranked first",
	"secrets <- vault.instance/prod-vault":    "selected: meets every constraint and policy and ranks first",
	"secrets <- vault.instance/scratch-vault": "rejected by policy prod-secrets-not-dev-mode: A Vault in dev mode never serves production.",
	"secrets <- vault.instance/staging-vault": "rejected: environment: want prod, got staging",
}

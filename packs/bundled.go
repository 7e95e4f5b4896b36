// Package packs holds the scenario packs bundled with Capstan: kubernetes,
// minio, vault, tempo, postgres, linux-service (real work on hosts over
// SSH) and the platform policies (all:tempo: its chart's _helpers.tpl
// is embedded too). simulated/ holds the earlier, simulated
// versions of tempo, minio and postgres, which the story on a catalog with no real
// targets pins (make run's demo catalog).
package packs

import "embed"

// FS holds every bundled pack: single YAML files and pack directories.
//
//go:embed *.yaml kubernetes all:tempo simulated
var FS embed.FS

// Order lists the bundled packs so that a pack comes after the packs whose
// capabilities it uses.
// An older version of a pack comes before its newer one.
var Order = []string{"kubernetes", "vault.yaml", "simulated/minio.yaml", "minio.yaml", "simulated/postgres.yaml", "postgres.yaml", "simulated/tempo.yaml", "tempo", "linux-service.yaml", "platform.yaml"}

// SimulatedTempoInstall is the simulated tempo story's scenario: an intent
// names it to tell the seed's story on a catalog with no real targets
// (make run's demo catalog), where tempo.install's newest, real version
// would reach for a cluster and a host that are not there.
const SimulatedTempoInstall = "tempo.install@1.3.0"

// Package packs holds the scenario packs bundled with Capstan: kubernetes,
// minio, vault, tempo, postgres, linux-service (real work on hosts over
// SSH) and the platform policies.
package packs

import "embed"

// FS holds every bundled pack: single YAML files and pack directories.
//
//go:embed *.yaml kubernetes
var FS embed.FS

// Order lists the bundled packs so that a pack comes after the packs whose
// capabilities it uses.
var Order = []string{"kubernetes", "vault.yaml", "minio.yaml", "postgres.yaml", "tempo.yaml", "linux-service.yaml", "platform.yaml"}

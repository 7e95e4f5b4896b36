module github.com/capstan-dev/capstan

go 1.26.8

require (
	github.com/99designs/gqlgen v0.17.98 // indirect
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/agnivade/levenshtein v1.2.2 // indirect
	github.com/dominikbraun/graph v0.23.0 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/google/cel-go v0.31.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/sosodev/duration v1.4.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/urfave/cli/v3 v3.14.0 // indirect
	github.com/vektah/gqlparser/v2 v2.5.64 // indirect
	github.com/vikstrous/dataloadgen v0.0.10 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.opentelemetry.io/otel v1.11.1 // indirect
	go.opentelemetry.io/otel/trace v1.11.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

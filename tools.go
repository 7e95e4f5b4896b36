//go:build tools

package capstan

import _ "github.com/99designs/gqlgen"

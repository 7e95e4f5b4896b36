//go:build crashpoints

package crashpoint

const enabled = true

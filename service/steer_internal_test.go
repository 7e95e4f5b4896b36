package service

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

func TestOnFreshState(t *testing.T) {
	stale := capstan.StaleVersion("operation", "op1", 5, 4)
	ended := capstan.Errorf(capstan.ECONFLICT, "operation op1 is cancelled")
	tests := []struct {
		name    string
		results []error // what each attempt returns; the last repeats
		calls   int
		want    error
	}{
		{"first try commits", []error{nil}, 1, nil},
		{"stale twice then commits", []error{stale, stale, nil}, 3, nil},
		{"stale then the state forbids it", []error{stale, ended}, 2, ended},
		{"a plain conflict is not retried", []error{ended}, 1, ended},
		{"stale every time gives up", []error{stale}, maxFreshTries, stale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := onFreshState(func() error {
				err := tt.results[min(calls, len(tt.results)-1)]
				calls++
				return err
			})
			require.Equal(t, tt.want, err)
			require.Equal(t, tt.calls, calls)
		})
	}
}

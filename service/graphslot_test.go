package service

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/capstan-dev/capstan"
)

// TestGraphWalksAreBoundedPerServer: past MaxConcurrentGraphWalks walks
// at once the next is refused, typed, and a slot let go serves again.
func TestGraphWalksAreBoundedPerServer(t *testing.T) {
	s := &Service{}
	var releases []func()
	for range MaxConcurrentGraphWalks {
		release, err := s.graphSlot()
		require.NoError(t, err)
		releases = append(releases, release)
	}
	_, err := s.graphSlot()
	require.Equal(t, capstan.EUNAVAILABLE, capstan.ErrorCode(err))
	releases[0]()
	release, err := s.graphSlot()
	require.NoError(t, err)
	release()
	for _, r := range releases[1:] {
		r()
	}
}

package executor_test

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// benchmarkDirectWrite writes one 4 KB block per iteration with O_DIRECT
// and O_DSYNC, so each write returns only once the device has it: no page
// cache, no separate sync. The file's blocks are written once before the
// timer starts, so no write has to allocate or convert an extent (which
// would add a journal commit to it).
func benchmarkDirectWrite(b *testing.B) {
	const block, blocks = 4096, 256
	f, err := os.OpenFile(b.TempDir()+"/floor", os.O_CREATE|os.O_RDWR|syscall.O_DIRECT|syscall.O_DSYNC, 0o600)
	require.NoError(b, err)
	defer f.Close()
	page := aligned(block)
	for i := 0; i < blocks; i++ {
		_, err := f.WriteAt(page, int64(i)*block)
		require.NoError(b, err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.WriteAt(page, int64(i%blocks)*block); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/write")
}

// aligned returns n bytes starting at an address that is a multiple of n
// (n a power of two), as O_DIRECT requires of its buffers.
func aligned(n int) []byte {
	raw := make([]byte, 2*n)
	off := n - int(uintptr(unsafe.Pointer(&raw[0]))&uintptr(n-1))
	return raw[off : off+n]
}

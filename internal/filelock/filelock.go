// Package filelock takes exclusive advisory locks on files (flock), held
// until the returned file is closed or the process exits.
package filelock

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// ErrLocked says another open of the file holds its lock.
var ErrLocked = errors.New("locked by another process")

// TryLock opens (creating) the file at path and takes its exclusive lock
// without waiting: ErrLocked when someone else holds it.
func TryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return f, nil
}

// Within takes path's lock as TryLock does, trying again every 50 ms for
// up to wait while another process holds it (a process that is exiting
// lets it go within moments); ErrLocked after that.
func Within(path string, wait time.Duration) (*os.File, error) {
	deadline := time.Now().Add(wait)
	for {
		f, err := TryLock(path)
		if !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			return f, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

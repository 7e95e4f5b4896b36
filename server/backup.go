package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/backup"
)

// BackupFunc writes a backup of org to w (backup.Write), from one
// consistent snapshot of the store.
type BackupFunc func(ctx context.Context, org string, w io.Writer) error

// backupHandler sends a backup of the caller's organization; only its
// admins may take one, and one backup runs at a time per process.
//
// The backup is written to a temporary file first, then sent: the
// store's read transaction lasts as long as the dump, not as long as the
// client takes to read (on the embedded store an open read transaction
// holds back every commit that grows the file). A dump that read a
// write half-way (backup.ErrTorn: Neo4j reads are read-committed) is
// taken again, up to backupAttempts times. A client that stops reading
// for backupWriteTimeout is dropped. A backup that fails once sending
// began ends without its end line, which every reader refuses.
func backupHandler(write BackupFunc, log *slog.Logger) http.Handler {
	var running atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeError(w, http.StatusMethodNotAllowed, capstan.EINVALID, "a backup is taken with GET")
			return
		}
		a, err := capstan.ActorFrom(r.Context())
		if err != nil || !a.HasRole(capstan.RoleAdmin) {
			writeError(w, http.StatusForbidden, capstan.EFORBIDDEN, "only an admin of the organization may take its backup")
			return
		}
		if !running.CompareAndSwap(false, true) {
			w.Header().Set("Retry-After", "10")
			writeError(w, http.StatusTooManyRequests, capstan.ERATELIMITED, "a backup is running on this server: try again when it ends")
			return
		}
		defer running.Store(false)
		org := a.OrganizationID
		start := time.Now()
		spool, err := dumpToFile(r.Context(), write, org)
		if err != nil {
			log.Error("backup failed", "org", org, "actor", a.ID, "err", err.Error())
			writeError(w, statusOf(err), capstan.ErrorCode(err), capstan.ErrorMessage(err))
			return
		}
		defer os.Remove(spool.Name())
		defer spool.Close()
		name := fmt.Sprintf("capstan-%s-%s.backup", org, time.Now().UTC().Format("20060102T150405Z"))
		w.Header().Set("Content-Type", "application/gzip")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.Header().Set("Cache-Control", "no-store")
		if info, err := spool.Stat(); err == nil {
			w.Header().Set("Content-Length", fmt.Sprint(info.Size()))
		}
		sent, err := io.Copy(&deadlineWriter{w: w, rc: http.NewResponseController(w)}, spool)
		if err != nil {
			log.Warn("backup not delivered", "org", org, "actor", a.ID, "sent", sent, "err", err.Error())
			return
		}
		log.Info("backup taken", "org", org, "actor", a.ID, "bytes", sent, "took", time.Since(start).String())
	})
}

// backupAttempts bounds how often a torn dump is taken again.
const backupAttempts = 3

// backupWriteTimeout is how long a client may take to read each part of
// a backup.
const backupWriteTimeout = time.Minute

// dumpToFile writes a backup of org to a temporary file (0600, removed
// by the caller) and rewinds it.
func dumpToFile(ctx context.Context, write BackupFunc, org string) (*os.File, error) {
	f, err := os.CreateTemp("", "capstan-backup-*")
	if err != nil {
		return nil, capstan.Wrap("backup", err)
	}
	for attempt := 1; ; attempt++ {
		err = write(ctx, org, f)
		if err == nil || !errors.Is(err, backup.ErrTorn) || attempt == backupAttempts {
			break
		}
		if err = f.Truncate(0); err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// deadlineWriter gives each write to the client backupWriteTimeout.
type deadlineWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(backupWriteTimeout))
	return d.w.Write(p)
}

func statusOf(err error) int {
	switch capstan.ErrorCode(err) {
	case capstan.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case capstan.EINVALID:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

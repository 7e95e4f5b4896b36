package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/capstan-dev/capstan"
)

// BackupFunc writes a backup of org to w (backup.Write), from one
// consistent snapshot of the store.
type BackupFunc func(ctx context.Context, org string, w io.Writer) error

// backupHandler streams a backup of the caller's organization; only its
// admins may take one, and one backup runs at a time per process (each
// holds a read transaction open while it streams: on the embedded store
// that keeps the pages it reads from being reused). A backup that fails
// mid-stream ends without its end line, which every reader refuses.
func backupHandler(write BackupFunc, log *slog.Logger) http.Handler {
	var running atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		name := fmt.Sprintf("capstan-%s-%s.backup", org, time.Now().UTC().Format("20060102T150405Z"))
		w.Header().Set("Content-Type", "application/gzip")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.Header().Set("Cache-Control", "no-store")
		start := time.Now()
		out := &startedWriter{w: w}
		if err := write(r.Context(), org, out); err != nil {
			log.Error("backup failed", "org", org, "actor", a.ID, "err", err.Error())
			if !out.started { // nothing sent yet: the answer can still say why
				w.Header().Del("Content-Disposition")
				writeError(w, statusOf(err), capstan.ErrorCode(err), capstan.ErrorMessage(err))
			}
			return
		}
		log.Info("backup taken", "org", org, "actor", a.ID, "took", time.Since(start).String())
	})
}

// startedWriter tells whether anything was written.
type startedWriter struct {
	w       io.Writer
	started bool
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = s.started || len(p) > 0
	return s.w.Write(p)
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

// Package guard keeps a panic in a goroutine that serves one client from
// taking the whole server down: the panic is logged with its stack and
// ends only what that goroutine served (a subscription, a connection).
package guard

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/capstan-dev/capstan"
)

// ErrPanicked is what a recovered goroutine's client is told: an internal
// error, with nothing of the panic's text (it may name internals).
var ErrPanicked = capstan.Errorf(capstan.EINTERNAL, "internal error")

// Recover must be deferred directly at the top of a goroutine that serves
// one client. On a panic it logs the value and the stack under where, then
// calls ended (when not nil) with ErrPanicked so the goroutine's owner can
// end the subscription or connection it served; the server goes on.
func Recover(log *slog.Logger, where string, ended func(error)) {
	p := recover()
	if p == nil {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Error("recovered a panic; ending what it served", "in", where, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	if ended != nil {
		ended(ErrPanicked)
	}
}

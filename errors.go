package capstan

import (
	"errors"
	"fmt"
)

// Error codes. Every error that leaves a service carries exactly one of them;
// GraphQL exposes it as extensions.code.
const (
	EINVALID         = "INVALID"
	ENOTFOUND        = "NOT_FOUND"
	ECONFLICT        = "CONFLICT"
	EFORBIDDEN       = "FORBIDDEN"
	EUNAUTHENTICATED = "UNAUTHENTICATED"
	EUNAVAILABLE     = "UNAVAILABLE"
	// ERATELIMITED: the caller asked more than its rate limit allows;
	// retry later (extensions.retryAfterSeconds, HTTP Retry-After).
	ERATELIMITED = "RATE_LIMITED"
	EINTERNAL    = "INTERNAL"
)

// Error is the one error type of Capstan. Code is machine readable, Message is
// safe to show to a client, Op names the operation that failed and Err keeps
// the underlying cause for logs only.
type Error struct {
	Code    string
	Op      string
	Message string
	// Details lists every individual problem when one call found several
	// (a pack lint, a plan validation). Each is safe to show to a client.
	Details []string
	// Extensions are more fields for the client (GraphQL
	// extensions), each safe to show: a PENDING command's id.
	Extensions map[string]any
	Err        error
}

func (e *Error) Error() string {
	s := e.Code
	if e.Op != "" {
		s = e.Op + ": " + s
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted client-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an internal error for op that keeps err for logs.
func Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: EINTERNAL, Op: op, Err: err}
}

// ErrorCode returns the code of err, EINTERNAL for foreign errors and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	}
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrStale is the cause of every optimistic-concurrency conflict: the
// update read a version that is no longer the stored one. A caller whose
// change is a fresh decision on fresh state (a cancel, a gate decision)
// may read again and retry; a caller that sent a version must not.
var ErrStale = errors.New("stale version")

// StaleVersion returns the conflict a store reports for a stale write.
func StaleVersion(what, id string, have, want int64) error {
	return &Error{Code: ECONFLICT, Err: ErrStale,
		Message: fmt.Sprintf("%s was changed by someone else: version %d is stored, the update read %d", Named(what, id), have, want)}
}

// IsStale reports whether err is a stale-version conflict.
func IsStale(err error) bool { return errors.Is(err, ErrStale) }

// ErrorMessage returns the client-safe message of err. Internal errors never
// reveal their text.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		if e.Message != "" {
			return e.Message
		}
		return e.Code
	}
	return "internal error"
}

// ErrorDetails returns the list of individual problems carried by err.
func ErrorDetails(err error) []string {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}

// Problems accumulates validation problems and turns them into one EINVALID error.
type Problems []string

// Addf records a problem.
func (p *Problems) Addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// Err returns nil when nothing was recorded, otherwise an EINVALID error
// whose message is the first problem and whose details are all of them,
// each prefixed with what they are about.
func (p Problems) Err(what string) error {
	if len(p) == 0 {
		return nil
	}
	details := make([]string, len(p))
	for i, d := range p {
		details[i] = what + ": " + d
	}
	msg := details[0]
	if len(p) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", details[0], len(p)-1)
	}
	return &Error{Code: EINVALID, Message: msg, Details: details}
}

// NotFound is the ENOTFOUND error of a store that holds no what named id
// ("scenario tempo.install@9.9.9 not found"): both stores say it so.
func NotFound(what, id string) error {
	return Errorf(ENOTFOUND, "%s not found", Named(what, id))
}

package secret

import (
	"context"
	"log/slog"
)

// LogHandler masks secret values in log records (message and attribute
// values, groups included) before its handler writes them.
type LogHandler struct {
	next  slog.Handler
	vault *Vault
}

// NewLogHandler wraps next.
func NewLogHandler(next slog.Handler, v *Vault) *LogHandler { return &LogHandler{next: next, vault: v} }

func (h *LogHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *LogHandler) Handle(ctx context.Context, rec slog.Record) error {
	r := h.vault.All()
	if r.Empty() {
		return h.next.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(maskAttr(r, a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func maskAttr(r *Redactor, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.String(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		masked := make([]any, len(attrs))
		for i, g := range attrs {
			masked[i] = maskAttr(r, g)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, r.String(err.Error()))
		}
		return slog.Any(a.Key, r.Value(v.Any()))
	}
	return a
}

func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	r := h.vault.All()
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = maskAttr(r, a)
	}
	return &LogHandler{next: h.next.WithAttrs(masked), vault: h.vault}
}

func (h *LogHandler) WithGroup(name string) slog.Handler {
	return &LogHandler{next: h.next.WithGroup(name), vault: h.vault}
}

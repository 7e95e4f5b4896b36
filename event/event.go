// Package event is the timeline's event contract as Go types
// (docs/EVENTS.md): one type per family of kinds, used where events are
// written (the executor, the service, the assessor) and where they are
// read (resolver/events for GraphQL, tracing). A writer builds the
// family's struct and records it (Record); a reader gets the struct back
// from a stored event (the family's Of function). The stored form stays
// capstan.OperationEvent — a type, an actor, a payload of JSON values —
// so events written before these types read the same.
package event

import (
	"strings"

	"github.com/capstan-dev/capstan"
)

// Event is one family's typed event.
type Event interface {
	// Kind is the event's type as stored: family.what.
	Kind() string
	// Payload is its fields as stored; an empty field is left out.
	Payload() map[string]any
}

// Record is e as the timeline stores it, by actor.
func Record(actor string, e Event) capstan.OperationEvent {
	return capstan.OperationEvent{Type: e.Kind(), Actor: actor, Payload: e.Payload()}
}

// Family is the family of a stored kind (operation, node, gate …).
func Family(kind string) string {
	f, _, _ := strings.Cut(kind, ".")
	return f
}

// what is the part of a kind after its family.
func what(kind string) string {
	_, w, _ := strings.Cut(kind, ".")
	return w
}

// payload builds a payload, leaving empty values out.
type payload map[string]any

func (p payload) str(k, v string) payload {
	if v != "" {
		p[k] = v
	}
	return p
}

func (p payload) num(k string, v int) payload {
	if v != 0 {
		p[k] = v
	}
	return p
}

func (p payload) strs(k string, v []string) payload {
	if len(v) > 0 {
		p[k] = v
	}
	return p
}

func (p payload) flag(k string, v *bool) payload {
	if v != nil {
		p[k] = *v
	}
	return p
}

func (p payload) out() map[string]any {
	if len(p) == 0 {
		return nil
	}
	return p
}

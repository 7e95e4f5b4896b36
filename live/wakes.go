package live

import (
	"sync"

	"github.com/capstan-dev/capstan"
)

// Wakes tells this process's executor of an operation it must act on at
// once: one started here (with its frozen plan), one given a command here
// (its plan nil). Store calls it after the commit; an executor on another
// replica learns of the same through its tailer (Tailer.Touched). So the
// service never holds the executor: the wake goes through the store.
type Wakes struct {
	mu sync.Mutex
	fn func(org, opID string, plan *capstan.Plan)
}

// NewWakes returns wakes no one listens to yet.
func NewWakes() *Wakes { return &Wakes{} }

// Listen makes fn the one listener (an executor, at its start; nil: none).
func (w *Wakes) Listen(fn func(org, opID string, plan *capstan.Plan)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fn = fn
}

// wake tells the listener, if any.
func (w *Wakes) wake(org, opID string, plan *capstan.Plan) {
	if w == nil {
		return
	}
	w.mu.Lock()
	fn := w.fn
	w.mu.Unlock()
	if fn != nil {
		fn(org, opID, plan)
	}
}

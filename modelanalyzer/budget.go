package modelanalyzer

import (
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
)

// budget caps the tokens the model may spend: per operation (over its
// life) and per organization (per UTC day). A request is refused before
// it is sent once either is spent, with RATE_LIMITED; what a request
// spent is counted when its answer arrives, so one request may overshoot
// by its own size (at most MaxTokens of completion). Counted in this
// process: replicas each keep their own count (docs/ANALYZER.md).
type budget struct {
	perOperation, perOrganization int64
	now                           func() time.Time

	mu   sync.Mutex
	ops  map[string]int64
	orgs map[string]orgSpend
}

type orgSpend struct {
	day    string
	tokens int64
}

func newBudget(perOperation, perOrganization int64, now func() time.Time) *budget {
	return &budget{perOperation: perOperation, perOrganization: perOrganization, now: now,
		ops: map[string]int64{}, orgs: map[string]orgSpend{}}
}

// check refuses a request when the operation's or the organization's
// budget is spent.
func (b *budget) check(org, op string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.perOperation > 0 && b.ops[org+"/"+op] >= b.perOperation {
		return capstan.Errorf(capstan.ERATELIMITED, "the analyzer's token budget of operation %s is spent (%d of %d tokens)", op, b.ops[org+"/"+op], b.perOperation)
	}
	if s := b.orgs[org]; b.perOrganization > 0 && s.day == b.day() && s.tokens >= b.perOrganization {
		return capstan.Errorf(capstan.ERATELIMITED, "the analyzer's daily token budget of this organization is spent (%d of %d tokens)", s.tokens, b.perOrganization)
	}
	return nil
}

// spend counts tokens a request used.
func (b *budget) spend(org, op string, tokens int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ops[org+"/"+op] += tokens
	s := b.orgs[org]
	if d := b.day(); s.day != d {
		s = orgSpend{day: d}
	}
	s.tokens += tokens
	b.orgs[org] = s
}

func (b *budget) day() string { return b.now().UTC().Format(time.DateOnly) }

package modelanalyzer

import (
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
)

// budget caps the tokens the model may spend: per operation (over its
// life) and per organization (per UTC day). Before each request an
// estimate of what it may spend (its prompt and MaxTokens) is reserved,
// and refused with RATE_LIMITED when it does not fit, so concurrent
// analyses cannot all pass one check; when the answer arrives the
// reservation is settled with what the server says it spent. Counted in
// this process: replicas each keep their own count (docs/ANALYZER.md).
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

// maxTrackedOperations bounds the operations counted at once; past it
// the counts of a tenth of them are forgotten (they get their budget back).
const maxTrackedOperations = 100_000

func newBudget(perOperation, perOrganization int64, now func() time.Time) *budget {
	return &budget{perOperation: perOperation, perOrganization: perOrganization, now: now,
		ops: map[string]int64{}, orgs: map[string]orgSpend{}}
}

// reserve takes n tokens from the operation's and the organization's
// budgets, or refuses when either would be overspent.
func (b *budget) reserve(org, op string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	key, day := org+"/"+op, b.day()
	s := b.orgs[org]
	if s.day != day {
		s = orgSpend{day: day}
	}
	if b.perOperation > 0 && b.ops[key]+n > b.perOperation {
		return capstan.Errorf(capstan.ERATELIMITED, "the analyzer's token budget of operation %s is spent (%d of %d tokens; a request may need %d)", op, b.ops[key], b.perOperation, n)
	}
	if b.perOrganization > 0 && s.tokens+n > b.perOrganization {
		return capstan.Errorf(capstan.ERATELIMITED, "the analyzer's daily token budget of this organization is spent (%d of %d tokens; a request may need %d)", s.tokens, b.perOrganization, n)
	}
	if b.perOperation > 0 {
		if len(b.ops) >= maxTrackedOperations {
			b.forget()
		}
		b.ops[key] += n
	}
	if b.perOrganization > 0 {
		s.tokens += n
		b.orgs[org] = s
	}
	return nil
}

// settle replaces a reservation of n tokens with what was spent.
func (b *budget) settle(org, op string, n, spent int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.perOperation > 0 {
		b.ops[org+"/"+op] += spent - n
	}
	if s := b.orgs[org]; b.perOrganization > 0 && s.day == b.day() {
		s.tokens += spent - n
		b.orgs[org] = s
	}
}

// forget drops a tenth of the counted operations.
func (b *budget) forget() {
	n := len(b.ops) / 10
	for k := range b.ops {
		if n == 0 {
			return
		}
		delete(b.ops, k)
		n--
	}
}

func (b *budget) day() string { return b.now().UTC().Format(time.DateOnly) }

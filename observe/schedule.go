package observe

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"log/slog"
	"sync"
	"time"

	"github.com/capstan-dev/capstan"
)

// Lister lists what a schedule looks at.
type Lister interface {
	ListResourceTypes(ctx context.Context, org string) ([]*capstan.ResourceType, error)
	ListResources(ctx context.Context, org string, f capstan.ResourceFilter) ([]*capstan.Resource, int, error)
}

// Schedule assesses every observed resource on its type's interval:
// each round lists the resources of the types that declare observe
// probes, and assesses those due (Due) at most Concurrency at once. It
// runs where the executor runs (the executor lease's holder).
type Schedule struct {
	Assessor *Assessor
	Store    Lister
	// Orgs names the organizations to look at.
	Orgs func() []string
	// Concurrency bounds the assessments under way (default 8).
	Concurrency int
	// Every, when set, overrides every type's interval.
	Every time.Duration
	// Jitter spreads each resource's assessments over this fraction of
	// its interval, so a thousand resources installed at once are not
	// assessed at once (default 0.1).
	Jitter float64
	Log    *slog.Logger
}

// listPage is how many resources a round reads at once.
const listPage = 500

// Due decides whether r is due for a scheduled assessment at now, on an
// interval with jitter (a fraction of it): never while paused, while an
// operation changes it, or when it is not built; else its last
// assessment (or, never assessed, its last write) plus the interval
// plus its own offset (a hash of its id, so it keeps its place) has
// passed.
func Due(r *capstan.Resource, interval time.Duration, jitter float64, now time.Time) bool {
	if r.AssessmentPaused != nil || r.ActiveOperationID != "" {
		return false
	}
	if r.LifecycleStatus != capstan.LifecycleActive && r.LifecycleStatus != capstan.LifecycleDegraded {
		return false
	}
	sum := sha256.Sum256([]byte(r.ID)) // well mixed, where FNV's high bits are not for short ids
	offset := time.Duration(float64(binary.BigEndian.Uint32(sum[:4])) / float64(1<<32) * jitter * float64(interval))
	if r.Assessment == nil {
		return !now.Before(r.UpdatedAt.Add(offset))
	}
	return !now.Before(r.Assessment.At.Add(interval + offset))
}

// Run runs rounds until ctx ends, and returns once its assessments have.
func (s *Schedule) Run(ctx context.Context) {
	for {
		tick := s.Round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
		}
	}
}

// Round assesses every resource due now and returns how long to wait
// before the next round (a quarter of the shortest interval, within
// [200ms, 30s]).
func (s *Schedule) Round(ctx context.Context) time.Duration {
	shortest := 30 * time.Second * 4
	concurrency := s.Concurrency
	if concurrency <= 0 {
		concurrency = 8
	}
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, org := range s.Orgs() {
		types, err := s.Store.ListResourceTypes(ctx, org)
		if err != nil {
			s.warn("listing resource types", org, "", err)
			continue
		}
		for _, t := range types {
			if t.Observe == nil {
				continue
			}
			interval := t.Observe.Interval()
			if s.Every > 0 {
				interval = s.Every
			}
			shortest = min(shortest, interval)
			s.each(ctx, org, t.Key, func(r *capstan.Resource) {
				if !Due(r, interval, s.jitter(), s.Assessor.now()) {
					return
				}
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					if _, err := s.Assessor.assess(ctx, org, r.Key(), Scheduler, types); err != nil && capstan.ErrorCode(err) != capstan.ECONFLICT && ctx.Err() == nil {
						s.warn("assessing", org, r.Key(), err)
					}
				}()
			})
		}
	}
	return min(max(shortest/4, 200*time.Millisecond), 30*time.Second)
}

// each calls fn for every resource of type typ, a page at a time.
func (s *Schedule) each(ctx context.Context, org, typ string, fn func(*capstan.Resource)) {
	after := ""
	for ctx.Err() == nil {
		page, _, err := s.Store.ListResources(ctx, org, capstan.ResourceFilter{Type: typ, After: after, Limit: listPage})
		if err != nil {
			s.warn("listing resources", org, typ, err)
			return
		}
		for _, r := range page {
			fn(r)
		}
		if len(page) < listPage {
			return
		}
		after = page[len(page)-1].Key()
	}
}

func (s *Schedule) jitter() float64 {
	if s.Jitter <= 0 {
		return 0.1
	}
	return min(s.Jitter, 1)
}

func (s *Schedule) warn(what, org, key string, err error) {
	if s.Log != nil {
		s.Log.Warn("assessment schedule: "+what, "organization", org, "resource", key, "error", capstan.ErrorMessage(err))
	}
}

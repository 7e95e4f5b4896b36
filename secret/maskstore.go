package secret

import (
	"context"
	"slices"

	"github.com/capstan-dev/capstan"
)

// MaskingStore masks every secret value of an operation's organization
// in what an operation change records — evidence sources, timeline
// payloads, intervention notes, node run errors, gate and patch comments
// and reasons — before the store keeps it. Every writer (the executor,
// the service) goes through it, so no stored output, and no GraphQL
// response or subscription payload read from it, holds a secret value.
type MaskingStore struct {
	capstan.Store
	Vault *Vault
}

// ApplyOperationChange masks, then writes.
func (s MaskingStore) ApplyOperationChange(ctx context.Context, org string, ch *capstan.OperationChange) error {
	r, err := s.Vault.Redactor(ctx, org)
	if err != nil {
		return err
	}
	if r.Empty() {
		return s.Store.ApplyOperationChange(ctx, org, ch)
	}
	masked := MaskChange(r, *ch)
	if err := s.Store.ApplyOperationChange(ctx, org, &masked); err != nil {
		return err
	}
	// The store sets ids, versions and sequences on what it wrote, in
	// place: the caller sees them, on the masked records it now holds.
	copy(ch.NodeRuns, masked.NodeRuns)
	copy(ch.Gates, masked.Gates)
	copy(ch.Evidence, masked.Evidence)
	copy(ch.Interventions, masked.Interventions)
	copy(ch.Events, masked.Events)
	copy(ch.Patches, masked.Patches)
	ch.Operation, ch.Plan, ch.Intent, ch.Resources, ch.Artifacts = masked.Operation, masked.Plan, masked.Intent, masked.Resources, masked.Artifacts
	return nil
}

// RecordCommand masks what a person wrote in the command (a comment, a
// note, a reason), then records it: a value pasted there is never stored.
func (s MaskingStore) RecordCommand(ctx context.Context, org, opID string, c *capstan.Command) error {
	r, err := s.Vault.Redactor(ctx, org)
	if err != nil {
		return err
	}
	masked := maskCommand(r, *c)
	return s.Store.RecordCommand(ctx, org, opID, &masked)
}

// maskCommand masks a command's free text.
func maskCommand(r *Redactor, c capstan.Command) capstan.Command {
	c.Args.Comment, c.Args.Note, c.Args.Reason, c.Error = r.String(c.Args.Comment), r.String(c.Args.Note), r.String(c.Args.Reason), r.String(c.Error)
	c.Details = slices.Clone(c.Details)
	for i := range c.Details {
		c.Details[i] = r.String(c.Details[i])
	}
	c.Args.Problems = slices.Clone(c.Args.Problems)
	for i := range c.Args.Problems {
		c.Args.Problems[i] = r.String(c.Args.Problems[i])
	}
	if c.Args.Revealed != nil {
		c.Args.Revealed = r.Map(c.Args.Revealed)
	}
	if p := c.Args.Proposal; p != nil {
		masked := *p
		masked.Reason = r.String(p.Reason)
		if p.Analysis != nil {
			a := *p.Analysis
			a.Diagnosis = r.String(a.Diagnosis)
			masked.Analysis = &a
		}
		c.Args.Proposal = &masked
	}
	return c
}

// MaskChange returns the change with its outputs masked; ch is not modified.
func MaskChange(r *Redactor, ch capstan.OperationChange) capstan.OperationChange {
	ch.Commands = slices.Clone(ch.Commands)
	for i := range ch.Commands {
		ch.Commands[i] = maskCommand(r, ch.Commands[i])
	}
	ch.Evidence = slices.Clone(ch.Evidence)
	for i := range ch.Evidence {
		ch.Evidence[i].Source = r.Map(ch.Evidence[i].Source)
	}
	ch.Events = slices.Clone(ch.Events)
	for i := range ch.Events {
		ch.Events[i].Payload = r.Map(ch.Events[i].Payload)
	}
	ch.Interventions = slices.Clone(ch.Interventions)
	for i := range ch.Interventions {
		ch.Interventions[i].Note = r.String(ch.Interventions[i].Note)
	}
	ch.NodeRuns = slices.Clone(ch.NodeRuns)
	for i := range ch.NodeRuns {
		ch.NodeRuns[i].Error = r.String(ch.NodeRuns[i].Error)
	}
	ch.Gates = slices.Clone(ch.Gates)
	for i := range ch.Gates {
		g := &ch.Gates[i]
		g.Decisions = slices.Clone(g.Decisions)
		for j := range g.Decisions {
			g.Decisions[j].Comment = r.String(g.Decisions[j].Comment)
		}
	}
	ch.Patches = slices.Clone(ch.Patches)
	for i := range ch.Patches {
		p := &ch.Patches[i]
		p.Reason, p.ClosedReason = r.String(p.Reason), r.String(p.ClosedReason)
		p.Decisions = slices.Clone(p.Decisions)
		for j := range p.Decisions {
			p.Decisions[j].Comment = r.String(p.Decisions[j].Comment)
		}
	}
	return ch
}

package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/capstan-dev/capstan"
	"github.com/capstan-dev/capstan/event"
	"github.com/capstan-dev/capstan/secret"
)

// reservedSecrets is where jobs' secret artifacts are kept: people do not
// write there.
const reservedSecrets = "operations/"

func (s *Service) vault() (*secret.Vault, error) {
	if s.Secrets == nil {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "this server has no secret store")
	}
	return s.Secrets, nil
}

// PutSecret stores (or replaces) a secret of the caller's organization;
// plans refer to it as secret:<name>.
func (s *Service) PutSecret(ctx context.Context, name, value string) (secret.Entry, error) {
	a, err := requireAction(ctx, capstan.ActionPutSecret)
	if err != nil {
		return secret.Entry{}, err
	}
	v, err := s.vault()
	if err != nil {
		return secret.Entry{}, err
	}
	if strings.HasPrefix(name, reservedSecrets) {
		return secret.Entry{}, capstan.Errorf(capstan.EINVALID, "secret names under %q are the jobs' own", reservedSecrets)
	}
	if err := v.Put(ctx, a.OrganizationID, name, []byte(value)); err != nil {
		return secret.Entry{}, err
	}
	s.Log.Info("secret stored", "organization", a.OrganizationID, "name", name, "actor", a.ID)
	return secret.Entry{Name: name, UpdatedAt: s.Now().UTC()}, nil
}

// ListSecrets names the organization's secrets (no values).
func (s *Service) ListSecrets(ctx context.Context) ([]secret.Entry, error) {
	a, err := requireAction(ctx, capstan.ActionListSecrets)
	if err != nil {
		return nil, err
	}
	v, err := s.vault()
	if err != nil {
		return nil, err
	}
	return v.List(ctx, a.OrganizationID)
}

// Revealed is a secret artifact's value, shown once to one person.
type Revealed struct {
	Artifact  capstan.Artifact
	Value     string
	ExpiresAt time.Time
}

// RevealSecret shows a secret artifact's value to a person the reveal
// policy allows (capstan.MayReveal: role × environment), for the reason
// they give; the reveal (who, which artifact, why — never the value) is
// recorded in the operation's timeline before the value is returned.
func (s *Service) RevealSecret(ctx context.Context, artifactGID, reason string) (*Revealed, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	org := a.OrganizationID
	op, art, err := s.artifact(ctx, org, artifactGID)
	if err != nil {
		return nil, err
	}
	in, err := s.Store.GetIntent(ctx, org, op.IntentID)
	if err != nil {
		return nil, err
	}
	if err := capstan.MayReveal(a, s.Production.Is(in.Environment()), reason); err != nil {
		return nil, err
	}
	if art.Sensitivity != capstan.SensitivitySecret {
		return nil, capstan.Errorf(capstan.EINVALID, "artifact %s is %s, not secret: there is nothing to reveal", art.Name, art.Sensitivity)
	}
	name, ok := secret.ParseRef(art.StorageRef)
	if !ok {
		return nil, capstan.Errorf(capstan.EUNAVAILABLE, "artifact %s was kept before the secret store and cannot be revealed", art.Name)
	}
	v, err := s.vault()
	if err != nil {
		return nil, err
	}
	value, err := v.Get(ctx, org, name)
	if err != nil {
		return nil, err
	}
	expires := s.Now().UTC().Add(capstan.RevealWindow)
	revealed := event.SecretRevealed{Artifact: artifactGID, Name: art.Name, ProducedBy: art.ProducedBy, Reason: reason, ExpiresAt: expires.Format(time.RFC3339)}
	if err := s.recordReveal(ctx, org, op, a.ID, revealed); err != nil {
		return nil, err // the value is shown only once its reveal is recorded
	}
	return &Revealed{Artifact: *art, Value: string(value), ExpiresAt: expires}, nil
}

// recordReveal puts a reveal on the operation's timeline: through its
// owner while it runs (a command, waited for); an ended operation has no
// owner, and the service writes its record itself.
func (s *Service) recordReveal(ctx context.Context, org string, op *capstan.Operation, actor string, e event.SecretRevealed) error {
	if !op.Status.Terminal() {
		_, err := s.submit(ctx, op.ID, capstan.CommandRevealed, capstan.CommandArgs{Revealed: e.Payload()})
		if capstan.ErrorCode(err) != capstan.ECONFLICT || !s.ended(ctx, org, op.ID) {
			return err
		}
	}
	return onFreshState(func() error {
		op, err := s.Store.GetOperation(ctx, org, op.ID)
		if err != nil {
			return err
		}
		return s.commit(ctx, org, &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{event.Record(actor, e)}})
	})
}

// ended reports whether the operation has ended (false when it cannot
// be read).
func (s *Service) ended(ctx context.Context, org, opID string) bool {
	op, err := s.Store.GetOperation(ctx, org, opID)
	return err == nil && op.Status.Terminal()
}

// revealed decides a secret.revealed command: its record.
func (s *Service) revealed(ctx context.Context, org, opID, actor string, payload map[string]any) (*capstan.OperationChange, error) {
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, err
	}
	e, _ := event.SecretRevealedOf(capstan.OperationEvent{Type: "secret.revealed", Payload: payload})
	return &capstan.OperationChange{Operation: op, Events: []capstan.OperationEvent{event.Record(actor, e)}}, nil
}

// Artifact returns an operation's artifact by its global id (ENOTFOUND
// outside the caller's organization): what Query.node answers for one.
func (s *Service) Artifact(ctx context.Context, artifactGID string) (*capstan.Artifact, error) {
	a, err := capstan.ActorFrom(ctx)
	if err != nil {
		return nil, err
	}
	_, art, err := s.artifact(ctx, a.OrganizationID, artifactGID)
	return art, err
}

// artifact reads the operation an artifact's global id names and finds
// the artifact among its records.
func (s *Service) artifact(ctx context.Context, org, artifactGID string) (*capstan.Operation, *capstan.Artifact, error) {
	opID, artID, err := capstan.ParseArtifactGID(artifactGID)
	if err != nil {
		return nil, nil, err
	}
	op, err := s.Store.GetOperation(ctx, org, opID)
	if err != nil {
		return nil, nil, err
	}
	recs, err := s.Store.OperationRecords(ctx, org, opID)
	if err != nil {
		return nil, nil, err
	}
	for i := range recs.Artifacts {
		if recs.Artifacts[i].ID == artID {
			return op, &recs.Artifacts[i], nil
		}
	}
	return nil, nil, capstan.Errorf(capstan.ENOTFOUND, "no artifact %s", artifactGID)
}

// refuseSecretValues refuses a value about to be stored where people read
// it — an intent's inputs, a change's parameters or inline node — when it
// holds the value of one of the organization's secrets: such a value is
// written as a secret:<name> reference (resolved only where a job runs),
// never as itself. Masking it instead would store a plan that no longer
// does what its author meant. The error never repeats the value.
func (s *Service) refuseSecretValues(ctx context.Context, org, where string, v any) error {
	if s.Secrets == nil || v == nil {
		return nil
	}
	r, err := s.Secrets.Redactor(ctx, org)
	if err != nil || r.Empty() {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return capstan.Wrap("service.refuseSecretValues", err)
	}
	var plain any
	if err := json.Unmarshal(data, &plain); err != nil {
		return capstan.Wrap("service.refuseSecretValues", err)
	}
	if r.Holds(plain) {
		return capstan.Errorf(capstan.EINVALID, "%s holds the value of a stored secret: write secret:<name> instead, so the value is resolved only where a job runs and never shown", where)
	}
	return nil
}

// refuseSecretsInChanges applies refuseSecretValues to what each change
// would store.
func (s *Service) refuseSecretsInChanges(ctx context.Context, org string, changes []capstan.PlanChange) error {
	for i, c := range changes {
		where := fmt.Sprintf("change %d (%s)", i+1, c.Op)
		if err := s.refuseSecretValues(ctx, org, where+" parameters", c.Parameters); err != nil {
			return err
		}
		if err := s.refuseSecretValues(ctx, org, where+" spec", c.Spec); err != nil {
			return err
		}
		// A change's reason is part of what an approver signs (the
		// patch's digest): masking it later would change that, so it
		// is refused here like the rest.
		if err := s.refuseSecretValues(ctx, org, where+" reason", c.Reason); err != nil {
			return err
		}
	}
	return nil
}

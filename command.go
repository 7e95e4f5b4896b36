package capstan

import (
	"encoding/json"
	"time"
)

// A Command is a person's request to change a running operation — a gate
// decision, an intervention, a retry, a cancel, a patch's approval,
// rejection or withdrawal — recorded for the operation's owner to apply.
// The operation has one writer, the executor that holds its shard: the
// service checks what needs no state (roles, that the operation exists),
// records the command (RecordCommand: no version of the operation moves)
// and waits; the owner decides it on the state it holds, in its next
// step, and commits its effect with the command's outcome, fenced.
type Command struct {
	ID string `json:"id"`
	// OperationID is the operation it is for (the store sets it).
	OperationID string      `json:"operation_id"`
	Kind        CommandKind `json:"kind"`
	// Actor is who asked, with the roles they held then.
	Actor Actor       `json:"actor"`
	At    time.Time   `json:"at"`
	Args  CommandArgs `json:"args"`
	// Status is pending until the owner applies or rejects it.
	Status CommandStatus `json:"status"`
	// Code and Error say why it was rejected (the error the mutation
	// answers: CONFLICT, INVALID, FORBIDDEN…).
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
	// Details are every problem of a refusal that found several (a
	// patch's validation), as its mutation answers them.
	Details []string `json:"details,omitempty"`
	// Result names what the command made (a patch's id), when it made
	// something the mutation answers with.
	Result    string     `json:"result,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
}

// CommandKind is what a command asks.
type CommandKind string

// The commands.
const (
	CommandDecideGate    CommandKind = "gate.decide"
	CommandIntervene     CommandKind = "node.intervene"
	CommandRetryNode     CommandKind = "node.retry"
	CommandCancel        CommandKind = "operation.cancel"
	CommandDecidePatch   CommandKind = "patch.decide"
	CommandWithdrawPatch CommandKind = "patch.withdraw"
	// CommandProposePatch proposes a patch: a person's, a revert, an
	// analyzer's (its refusal recorded as analysis.proposal_refused), or
	// the drift gate an assessment asks for.
	CommandProposePatch CommandKind = "patch.propose"
	// CommandRecheckPatches marks stale the proposed patches that no
	// longer apply (the executor, after nodes moved).
	CommandRecheckPatches CommandKind = "patch.recheck"
	// CommandAnalysisFailed records why an analysis gave nothing to
	// propose (analysis.failed).
	CommandAnalysisFailed CommandKind = "analysis.failed"
	// CommandRevealed records that a person was shown a secret artifact's
	// value (secret.revealed), before it is shown.
	CommandRevealed CommandKind = "secret.revealed"
)

// CommandArgs are a command's arguments (each kind reads its own).
type CommandArgs struct {
	Node    string `json:"node,omitempty"`
	Approve bool   `json:"approve,omitempty"`
	Comment string `json:"comment,omitempty"`
	Type    string `json:"type,omitempty"`
	Note    string `json:"note,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Patch   string `json:"patch,omitempty"`
	Digest  string `json:"digest,omitempty"`
	// Proposal is a patch.propose command's patch.
	Proposal *PatchProposal `json:"proposal,omitempty"`
	// Problems are an analysis.failed command's reasons.
	Problems []string `json:"problems,omitempty"`
	// Revealed is a secret.revealed command's record.
	Revealed map[string]any `json:"revealed,omitempty"`
}

// PatchProposal is what a patch.propose command proposes, and for whom.
type PatchProposal struct {
	// Author is who proposes: the person, ai-agent:<analyzer> or
	// capstan:assessor; Roles and MayAuthor are a person's.
	Author    string         `json:"author"`
	Roles     []string       `json:"roles,omitempty"`
	MayAuthor bool           `json:"may_author,omitempty"`
	Base      int            `json:"base"`
	Changes   []PlanChange   `json:"changes"`
	Reason    string         `json:"reason"`
	Reverts   string         `json:"reverts,omitempty"`
	Analysis  *PatchAnalysis `json:"analysis,omitempty"`
	// Restorable and Reverting are what a revert may do beyond a change:
	// bring earlier nodes back, remove the nodes the reverted patch added.
	Restorable []PlanNode `json:"restorable,omitempty"`
	Reverting  []string   `json:"reverting,omitempty"`
}

// CommandStatus is where a command is.
type CommandStatus string

// Command statuses.
const (
	CommandPending  CommandStatus = "pending"
	CommandApplied  CommandStatus = "applied"
	CommandRejected CommandStatus = "rejected"
)

// Decided reports whether the owner applied or rejected the command.
func (c *Command) Decided() bool { return c.Status == CommandApplied || c.Status == CommandRejected }

// Outcome is the command's rejection as the error the mutation answers
// (nil once applied).
func (c *Command) Outcome() error {
	if c.Status != CommandRejected {
		return nil
	}
	return &Error{Code: c.Code, Message: c.Error, Details: c.Details}
}

// Reject records err as the command's outcome at now.
func (c *Command) Reject(err error, now time.Time) {
	c.Status, c.Code, c.Error, c.Details, c.DecidedAt = CommandRejected, ErrorCode(err), ErrorMessage(err), ErrorDetails(err), &now
}

// Apply records the command as applied at now, having made result.
func (c *Command) Apply(result string, now time.Time) {
	c.Status, c.Result, c.DecidedAt = CommandApplied, result, &now
}

// EncodeCommand is a command's stored form.
func EncodeCommand(c *Command) ([]byte, error) { return json.Marshal(c) }

// Ended is the refusal of a command to an operation that has ended: no
// owner runs it any more, and nothing of it changes.
func Ended(opID string) error {
	return Errorf(ECONFLICT, "%s has ended: it takes no more changes", Named("operation", opID))
}

// EPENDING: a mutation was recorded as a command, but the operation's
// owner has not applied it within the wait (no executor holds its shard
// right now, or one is taking it over): it takes effect when one does.
// extensions.command names it; the operation's timeline shows its effect
// (or a command.rejected event).
const EPENDING = "PENDING"

// MaxCommandWait bounds how long a mutation waits for the owner's step
// before it answers PENDING.
const MaxCommandWait = 10 * time.Second

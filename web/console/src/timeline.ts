import { graphql } from "./gql";
import type { TimelineEventFragment } from "./gql/graphql";

// The operation's timeline from a cursor (docs/EVENTS.md): one selection
// spreads every event type; a field name means one thing everywhere.
export const TimelineEvent = graphql(`
  fragment TimelineEvent on OperationEvent {
    __typename
    sequence
    type
    actor
    at
    ... on OperationStatusEvent { operationStatus reason failedNode revision }
    ... on NodeEvent { node runStatus attempt revision reason wait }
    ... on GateEvent { node runStatus approve role }
    ... on PatchEvent { revision reason patch { id } }
    ... on PlanRevisedEvent { revision digest }
    ... on EvidenceEvent { node item result }
    ... on ResourceEvent { lifecycle health outcome reason resource { key } }
    ... on BindingEvent { binding provider { key } }
    ... on InterventionEvent { node interventionType }
    ... on AnalysisEvent { node diagnosis }
    ... on SecretRevealedEvent { name producedBy reason }
  }
`);

export const OperationEvents = graphql(`
  subscription OperationEvents($id: ID!, $after: String) {
    operationEvents(operation: $id, after: $after) {
      cursor
      node {
        ...TimelineEvent
      }
    }
  }
`);

// finalStatuses are the statuses an operation ends in.
export const finalStatuses: ReadonlySet<string> = new Set(["SUCCEEDED", "FAILED", "CANCELLED", "ROLLED_BACK"]);

export type TimelineEntry = TimelineEventFragment & { cursor: string };

// appendEvents adds a batch to what is shown, in sequence order, each
// event once: a replay after a reconnect or an OVERFLOW never shows an
// event twice, and the stream's order means nothing is skipped.
export function appendEvents(shown: TimelineEntry[], batch: TimelineEntry[]): TimelineEntry[] {
  let last = shown.length ? shown[shown.length - 1].sequence : 0;
  const fresh: TimelineEntry[] = [];
  for (const e of batch) {
    if (e.sequence > last) {
      fresh.push(e);
      last = e.sequence;
    }
  }
  return fresh.length ? shown.concat(fresh) : shown;
}

// describe is one line a person reads for an event.
export function describe(e: TimelineEventFragment): string {
  switch (e.__typename) {
    case "OperationStatusEvent":
      return [e.operationStatus?.toLowerCase(), e.failedNode && `at ${e.failedNode}`, e.reason].filter(Boolean).join(" · ");
    case "NodeEvent":
      return [e.node, e.runStatus?.toLowerCase(), e.attempt && e.attempt > 1 ? `attempt ${e.attempt}` : "", e.revision ? `revision ${e.revision}` : "", e.reason, e.wait].filter(Boolean).join(" · ");
    case "GateEvent":
      return [e.node, e.approve === true ? "approved" : e.approve === false ? "rejected" : "", e.role && `as ${e.role}`, e.runStatus?.toLowerCase()].filter(Boolean).join(" · ");
    case "PatchEvent":
      return [e.patch?.id, e.revision ? `revision ${e.revision}` : "", e.reason].filter(Boolean).join(" · ");
    case "PlanRevisedEvent":
      return `revision ${e.revision ?? "?"} (${(e.digest ?? "").slice(0, 12)})`;
    case "EvidenceEvent":
      return `${e.node}: ${e.item} ${e.result.toLowerCase()}`;
    case "ResourceEvent":
      return [e.resource?.key, e.lifecycle?.toLowerCase(), e.health?.toLowerCase(), e.outcome?.toLowerCase(), e.reason].filter(Boolean).join(" · ");
    case "BindingEvent":
      return [e.binding, e.provider && `→ ${e.provider.key}`].filter(Boolean).join(" ");
    case "InterventionEvent":
      return `${e.node}: ${e.interventionType ?? "intervention"}`;
    case "AnalysisEvent":
      return `${e.node}: ${e.diagnosis ?? ""}`;
    case "SecretRevealedEvent":
      return `${e.name ?? "secret"} of ${e.producedBy ?? "?"} revealed: ${e.reason ?? ""}`;
    default:
      return "";
  }
}

import { useEffect, useState } from "react";
import { useApolloClient } from "@apollo/client/react";
import { useFragment as readFragment } from "./gql";
import { OperationEvents, TimelineEvent, appendEvents, finalStatuses, type TimelineEntry } from "./timeline";
import { codeOf, overflowCursor } from "./errors";

export type Timeline = {
  events: TimelineEntry[];
  // resumes counts the subscriptions started again from a cursor (after a
  // lost connection or an OVERFLOW).
  resumes: number;
  error?: string;
  done: boolean;
};

// Codes a new subscription would only get again: the timeline says why and
// stops (UNAUTHENTICATED: the token is gone; the rest: no such operation,
// not yours, a cursor the server does not take).
const permanent = new Set(["UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "INVALID"]);

// useTimeline follows an operation's timeline: every event from the
// start, then live, each shown once and in order. When the subscription
// ends with an error (the connection was lost, or OVERFLOW: the client
// fell behind) it subscribes again from the last cursor it received (or
// the one OVERFLOW names), after a short wait that grows with failures.
// It is done only when the stream completes after the operation's final
// event: a stream that completes before (a server shutting down) is
// followed again from the cursor.
// Events are applied once per animation frame: a replay of thousands is
// one render, a live event reaches the screen within a frame.
export function useTimeline(operation: string): Timeline {
  const client = useApolloClient();
  const [state, setState] = useState<Timeline>({ events: [], resumes: 0, done: false });
  useEffect(() => {
    let cursor: string | null = null;
    let ended = false; // the operation's final status event arrived
    let failures = 0;
    let stopped = false;
    let pending: TimelineEntry[] = [];
    let frame = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let sub: { unsubscribe: () => void } | undefined;
    setState({ events: [], resumes: 0, done: false });
    const flush = () => {
      frame = 0;
      const batch = pending;
      pending = [];
      setState((s) => ({ ...s, events: appendEvents(s.events, batch), error: undefined }));
    };
    const resume = (why: string, from?: string, code?: string) => {
      sub?.unsubscribe();
      if (stopped) return;
      if (code && permanent.has(code)) {
        setState((s) => ({ ...s, error: why, done: true }));
        return;
      }
      if (from) cursor = from;
      failures++;
      setState((s) => ({ ...s, error: why }));
      timer = setTimeout(() => { setState((s) => ({ ...s, resumes: s.resumes + 1 })); follow(); }, Math.min(250 * failures, 5000));
    };
    const follow = () => {
      sub = client.subscribe({ query: OperationEvents, variables: { id: operation, after: cursor } }).subscribe({
        next: (result) => {
          if (result.error) {
            resume(result.error.message, overflowCursor(result.error), codeOf(result.error));
            return;
          }
          const edge = result.data?.operationEvents;
          if (!edge) return;
          failures = 0;
          cursor = edge.cursor;
          const ev = readFragment(TimelineEvent, edge.node);
          if (ev.__typename === "OperationStatusEvent" && ev.operationStatus && finalStatuses.has(ev.operationStatus)) ended = true;
          pending.push({ ...ev, cursor: edge.cursor });
          if (!frame) frame = requestAnimationFrame(flush);
        },
        error: (err: Error) => resume(err.message ?? String(err), undefined, codeOf(err)),
        complete: () => {
          if (stopped) return;
          if (ended) setState((s) => ({ ...s, done: true }));
          else resume("the stream ended before the operation did");
        },
      });
    };
    follow();
    return () => {
      stopped = true;
      clearTimeout(timer);
      if (frame) cancelAnimationFrame(frame);
      sub?.unsubscribe();
    };
  }, [client, operation]);
  return state;
}

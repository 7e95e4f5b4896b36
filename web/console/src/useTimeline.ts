import { useEffect, useState } from "react";
import { useApolloClient } from "@apollo/client/react";
import { useFragment as readFragment } from "./gql";
import { OperationEvents, TimelineEvent, appendEvents, type TimelineEntry } from "./timeline";

export type Timeline = {
  events: TimelineEntry[];
  // resumes counts the subscriptions started again from a cursor (after a
  // lost connection or an OVERFLOW).
  resumes: number;
  error?: string;
  done: boolean;
};

// useTimeline follows an operation's timeline: every event from the
// start, then live, each shown once and in order. When the subscription
// ends with an error (the connection was lost, or OVERFLOW: the client
// fell behind) it subscribes again from the last cursor it received (or
// the one OVERFLOW names), after a short wait that grows with failures.
// Events are applied once per animation frame: a replay of thousands is
// one render, a live event reaches the screen within a frame.
export function useTimeline(operation: string): Timeline {
  const client = useApolloClient();
  const [state, setState] = useState<Timeline>({ events: [], resumes: 0, done: false });
  useEffect(() => {
    let cursor: string | null = null;
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
    const resume = (why: string, from?: string) => {
      sub?.unsubscribe();
      if (stopped) return;
      if (from) cursor = from;
      failures++;
      setState((s) => ({ ...s, error: why }));
      timer = setTimeout(() => { setState((s) => ({ ...s, resumes: s.resumes + 1 })); follow(); }, Math.min(250 * failures, 5000));
    };
    const follow = () => {
      sub = client.subscribe({ query: OperationEvents, variables: { id: operation, after: cursor } }).subscribe({
        next: (result) => {
          if (result.error) {
            const ext = overflowCursor(result.error);
            resume(result.error.message, ext);
            return;
          }
          const edge = result.data?.operationEvents;
          if (!edge) return;
          failures = 0;
          cursor = edge.cursor;
          pending.push({ ...readFragment(TimelineEvent, edge.node), cursor: edge.cursor });
          if (!frame) frame = requestAnimationFrame(flush);
        },
        error: (err: Error) => resume(err.message ?? String(err)),
        complete: () => {
          if (!stopped) setState((s) => ({ ...s, done: true }));
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

// overflowCursor is the cursor an OVERFLOW error says to resume from.
function overflowCursor(err: unknown): string | undefined {
  const errors = (err as { errors?: { extensions?: Record<string, unknown> }[] }).errors ?? [];
  for (const e of errors) {
    if (e.extensions?.code === "OVERFLOW" && typeof e.extensions.cursor === "string") return e.extensions.cursor;
  }
  return undefined;
}

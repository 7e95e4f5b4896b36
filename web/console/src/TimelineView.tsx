import { useEffect, useRef } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { describe } from "./timeline";
import type { Timeline } from "./useTimeline";

const rowHeight = 28;

// TimelineView draws the timeline as a virtualized list: only the rows in
// view are in the DOM, so a timeline of tens of thousands of events scrolls
// like one of ten. It follows the newest event while the reader is at the
// bottom, and stays put when they scrolled up to read.
export function TimelineView({ timeline }: { timeline: Timeline }) {
  const scroller = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const events = timeline.events;
  const rows = useVirtualizer({ count: events.length, getScrollElement: () => scroller.current, estimateSize: () => rowHeight, overscan: 12 });
  useEffect(() => {
    if (atBottom.current && events.length) rows.scrollToIndex(events.length - 1, { align: "end" });
  }, [events.length, rows]);
  return (
    <section aria-labelledby="timeline-title">
      <h3 id="timeline-title">Timeline</h3>
      {/* The count changes with every event: not announced. The state
          (live, complete, resumed, reconnecting) is. */}
      <p className="muted">
        <span aria-live="off">{events.length} events</span>
        <span role="status">{timeline.done ? " · complete" : " · live"}
          {timeline.resumes > 0 && ` · resumed ${timeline.resumes}× from its cursor`}
          {timeline.error && (timeline.done ? ` · stopped: ${timeline.error}` : ` · reconnecting (${timeline.error})`)}</span>
      </p>
      <div ref={scroller} className="timeline" tabIndex={0} aria-label="timeline events" data-count={events.length}
        onScroll={(e) => { const el = e.currentTarget; atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < rowHeight * 2; }}>
        <ol style={{ height: rows.getTotalSize(), position: "relative", margin: 0, padding: 0 }}>
          {rows.getVirtualItems().map((v) => {
            const e = events[v.index];
            return (
              <li key={e.sequence} data-sequence={e.sequence} className="event"
                style={{ position: "absolute", top: 0, left: 0, right: 0, height: rowHeight, transform: `translateY(${v.start}px)` }}>
                <span className="seq">#{e.sequence}</span>
                <time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time>
                <code>{e.type}</code>
                <span className="what">{describe(e)}</span>
                <span className="muted">{e.actor}</span>
              </li>
            );
          })}
        </ol>
      </div>
    </section>
  );
}

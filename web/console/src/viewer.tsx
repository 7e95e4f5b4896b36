import { createContext, useContext, type ReactNode } from "react";
import type { Action } from "./gql/graphql";

// A verdict the server gave: allowed, or not with the reason it would
// refuse with (Viewer.permissions, Gate.viewerMayApprove, …). The console
// never keeps its own copy of the policy.
export type Verdict = { allowed: boolean; reason?: string | null };

export type Viewer = {
  actor: string;
  organization: string;
  roles: string[];
  permissions: ({ action: Action } & Verdict)[];
};

const ViewerContext = createContext<Viewer | null>(null);

export function ViewerProvider({ viewer, children }: { viewer: Viewer; children: ReactNode }) {
  return <ViewerContext.Provider value={viewer}>{children}</ViewerContext.Provider>;
}

export function useViewer(): Viewer {
  const v = useContext(ViewerContext);
  if (!v) throw new Error("useViewer outside the signed-in shell");
  return v;
}

// may is the viewer's verdict on a role-only action.
export function may(viewer: Viewer, action: Action): Verdict {
  return viewer.permissions.find((p) => p.action === action) ?? { allowed: false, reason: "unknown action" };
}

// readOnly viewers (no role-only action allowed: a viewer token) see no
// action buttons at all; everyone else sees them, disabled with the reason
// when the server says no.
export function readOnly(viewer: Viewer): boolean {
  return !viewer.permissions.some((p) => p.allowed);
}

// ActionButton is a button the server's verdict governs: shown when it
// allows the action; when it refuses, hidden from read-only viewers and
// disabled with the reason beside it for everyone else. (A token with only
// custom roles takes no role-only action but may decide a gate that asks
// for its role: the verdict, not the role list, decides.)
export function ActionButton({ verdict, onClick, busy, children, label, kind }: {
  verdict: Verdict; onClick: () => void; busy?: boolean; children: ReactNode; label?: string;
  // kind styles the button: primary (the page's main action), danger.
  kind?: "primary" | "danger";
}) {
  const viewer = useViewer();
  if (!verdict.allowed && readOnly(viewer)) return null;
  const refused = !verdict.allowed;
  return (
    <span className="action">
      <button type="button" className={kind} aria-label={label} disabled={refused || busy} aria-disabled={refused || busy}
        title={refused ? verdict.reason ?? "" : ""} onClick={onClick}>{children}</button>
      {refused && <span className="why">{verdict.reason}</span>}
    </span>
  );
}

// ReadOnlyNote tells a read-only viewer why there are no buttons.
export function ReadOnlyNote() {
  const viewer = useViewer();
  if (!readOnly(viewer)) return null;
  return <p className="why" role="note">Read-only: your roles ({viewer.roles.join(", ") || "none"}) take no actions here.</p>;
}

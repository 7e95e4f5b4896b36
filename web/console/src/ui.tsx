import { useEffect, useState, type ReactNode } from "react";

// The console's small design system (style.css holds its tokens: type
// scale, spacing, colours for both themes). Every status the API returns —
// an operation's, a node run's, a plan's, a resource's — is shown by one
// component, with one tone, one icon and its word, so colour is never the
// only signal (WCAG 1.4.1) and a legend can list them.

export type Tone = "success" | "info" | "warn" | "danger" | "neutral";

const tones: Record<string, [Tone, string]> = {};
function tone(t: Tone, icon: string, ...statuses: string[]) {
  for (const s of statuses) tones[s] = [t, icon];
}
tone("success", "✓", "succeeded", "resolved", "ready", "active", "healthy", "passed", "applied", "approved", "completed", "satisfied");
tone("info", "▶", "running", "verifying", "executing", "planning", "updating", "provisioning", "repairing", "deleting", "live");
tone("info", "↺", "rolling_back", "cancelling", "retrying");
tone("warn", "‖", "waiting", "waiting_approval", "waiting_intervention", "pending_sub_operation", "proposed", "inconclusive", "planned_sub_operation");
tone("danger", "✗", "failed", "rejected", "invalid", "unhealthy", "unresolved");
tone("danger", "⚠", "drifted", "degraded", "unreachable", "rolled_back");
tone("neutral", "○", "pending", "planned", "draft", "unknown", "created");
tone("info", "+", "create");
tone("info", "✎", "change");
tone("warn", "↻", "reapply");
tone("danger", "−", "delete");
tone("danger", "✗", "refused");
tone("neutral", "⊘", "cancelled", "skipped", "superseded", "deleted", "stale", "withdrawn", "not_applicable");

// look is a status's tone and icon (an unknown status is neutral).
export function look(status: string): { tone: Tone; icon: string } {
  const [t, icon] = tones[status.toLowerCase()] ?? ["neutral", "•"];
  return { tone: t, icon };
}

// words is how a status reads: SUCCEEDED → succeeded.
export function words(status: string): string {
  return status.toLowerCase().replace(/_/g, " ");
}

// Status shows one status: icon, word, tone. The class status-<status>
// stays for the tests and for links to it.
export function Status({ value, children }: { value: string; children?: ReactNode }) {
  const s = value.toLowerCase();
  const { tone: t, icon } = look(s);
  return (
    <span className={`status status-${s} tone-${t}`}>
      <span className="icon" aria-hidden="true">{icon}</span>{children ?? words(value)}
    </span>
  );
}

// StatusLegend names what each tone and icon means where statuses are
// drawn (the DAG, the dashboard).
export function StatusLegend({ statuses, label = "status legend" }: { statuses: string[]; label?: string }) {
  return (
    <ul className="status-legend" aria-label={label}>
      {statuses.map((s) => <li key={s}><Status value={s} /></li>)}
    </ul>
  );
}

// KeyValues shows a JSON object (a desired result, constraints, a scope)
// as key: value pairs; nested values stay compact JSON.
export function KeyValues({ value, label }: { value: unknown; label: string }) {
  const entries = value && typeof value === "object" && !Array.isArray(value) ? Object.entries(value as Record<string, unknown>) : [];
  if (entries.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="kv" aria-label={label}>
      {entries.map(([k, v]) => (
        <li key={k}><span className="k">{k}</span><span className="v">{typeof v === "string" ? v : JSON.stringify(v)}</span></li>
      ))}
    </ul>
  );
}

// Theme: the system's colour scheme unless the viewer chose one (kept in
// this browser's local storage).
export type Theme = "system" | "light" | "dark";
const themeKey = "capstan.theme";

function savedTheme(): Theme {
  const t = localStorage.getItem(themeKey);
  return t === "light" || t === "dark" ? t : "system";
}

export function applyTheme(t: Theme) {
  if (t === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", t);
}

// ThemeToggle cycles system → light → dark.
export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(savedTheme);
  useEffect(() => {
    applyTheme(theme);
    if (theme === "system") localStorage.removeItem(themeKey);
    else localStorage.setItem(themeKey, theme);
  }, [theme]);
  const next: Theme = theme === "system" ? "light" : theme === "light" ? "dark" : "system";
  return (
    <button type="button" className="ghost" aria-label={`colour theme: ${theme}; switch to ${next}`} onClick={() => setTheme(next)}>
      <span aria-hidden="true">{theme === "dark" ? "☾" : theme === "light" ? "☀" : "◐"}</span> {theme}
    </button>
  );
}

// initTheme applies the saved theme before the first paint.
export function initTheme() {
  applyTheme(savedTheme());
}

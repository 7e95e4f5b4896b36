import { useEffect, useMemo, useState } from "react";
import { ApolloProvider, useQuery } from "@apollo/client/react";
import { graphql } from "./gql";
import { newClient, type Console, type LinkState } from "./apollo";
import { forgetToken, saveToken, savedToken } from "./session";
import { SignIn } from "./SignIn";
import { Operations } from "./Operations";
import { OperationPage } from "./OperationPage";
import { Plans } from "./Plans";
import { PlanReview } from "./PlanReview";
import { Explorer } from "./Explorer";
import { ViewerProvider } from "./viewer";
import { codeOf } from "./errors";
import { ThemeToggle } from "./ui";

const ViewerQuery = graphql(`
  query Viewer {
    viewer {
      actor
      organization
      roles
      trustedDocuments
      permissions {
        action
        allowed
        reason
      }
    }
  }
`);

export function App() {
  const [token, setToken] = useState<string | null>(savedToken());
  const [refusal, setRefusal] = useState<string | undefined>();
  const conn = useMemo(() => (token ? newClient(token) : null), [token]);
  useEffect(() => () => conn?.dispose(), [conn]);
  const signOut = (why?: string) => {
    forgetToken();
    setRefusal(why);
    setToken(null);
  };
  if (!token || !conn) {
    return <SignIn error={refusal} onToken={(t) => { saveToken(t); setRefusal(undefined); setToken(t); }} />;
  }
  return (
    <ApolloProvider client={conn.client}>
      <Shell conn={conn} onSignOut={signOut} />
    </ApolloProvider>
  );
}

const pages: { prefix: string; label: string }[] = [
  { prefix: "#/operations", label: "Operations" }, { prefix: "#/plans", label: "Plans" }, { prefix: "#/explorer", label: "Explorer" },
];

function Shell({ conn, onSignOut }: { conn: Console; onSignOut: (why?: string) => void }) {
  const { data, error, refetch } = useQuery(ViewerQuery);
  const route = useHashRoute();
  const link = useLinkState(conn);
  // Only a refused token signs out; a server that is restarting or a
  // network that dropped is said so, and the next read tries again.
  useEffect(() => {
    if (error && codeOf(error) === "UNAUTHENTICATED") onSignOut("The server refused this token: check it (make run prints the dev token), or ask for a new one.");
  }, [error, onSignOut]);
  const viewer = data?.viewer;
  // Set while rendering, not in an effect: the pages below ask their
  // queries in their own effects, which run before this component's.
  if (viewer) conn.trustedDocuments(viewer.trustedDocuments);
  const current = route === "" || route === "#/" ? "#/operations" : route;
  return (
    <div className="shell">
      <a className="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById("main")?.focus(); }}>Skip to content</a>
      <header>
        <span className="brand"><span className="mark" aria-hidden="true">C</span>Capstan</span>
        <nav aria-label="pages">
          {pages.map((p) => (
            <a key={p.prefix} href={`${p.prefix}`} aria-current={current.startsWith(p.prefix) ? "page" : undefined}>{p.label}</a>
          ))}
          <a href="/graphiql">GraphiQL</a>
        </nav>
        <span className="end">
          {/* Live updates flow only while a page follows something: on
              the others there is nothing to say. */}
          <span className={`link link-${link}`} role="status" aria-label="live updates">
            {link !== "idle" && <><span aria-hidden="true">{link === "live" ? "●" : "○"}</span> {link === "live" ? "live" : link === "connecting" ? "connecting…" : "reconnecting…"}</>}
          </span>
          {viewer && (
            <span className="viewer" aria-label="signed in as">
              {viewer.actor} · {viewer.organization} · {viewer.roles.join(", ")}
            </span>
          )}
          <ThemeToggle />
          <button type="button" onClick={() => onSignOut()}>Sign out</button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {viewer ? <ViewerProvider viewer={viewer}><Page route={current} /></ViewerProvider>
          : error && codeOf(error) !== "UNAUTHENTICATED" ? <p role="alert" className="error">Cannot reach Capstan: {error.message} <button type="button" onClick={() => void refetch()}>Try again</button></p>
          : <p>Loading…</p>}
      </main>
    </div>
  );
}

// Page picks the page for a route: #/operations, #/operations/<id>,
// #/plans, #/plans/<id>, #/explorer, #/explorer/<resource id>. Ids are the
// API's global ids.
function Page({ route }: { route: string }) {
  const [, page, id] = route.split("/").map(decodeSafely);
  switch (page) {
    case "plans":
      return id ? <PlanReview key={id} id={id} /> : <Plans />;
    case "explorer":
      return <Explorer id={id || undefined} />;
    default:
      // One mount per operation: its tab, drawer, timeline and DAG start afresh.
      return id ? <OperationPage key={id} id={id} /> : <Operations />;
  }
}

function decodeSafely(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // a malformed %-escape names nothing: the page says "no such …"
  }
}

// useHashRoute follows location.hash (the server serves the console at /
// only).
function useHashRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const follow = () => setHash(location.hash);
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  return hash;
}

function useLinkState(conn: Console): LinkState {
  const [state, setState] = useState<LinkState>("connecting");
  useEffect(() => conn.onLinkState(setState), [conn]);
  return state;
}

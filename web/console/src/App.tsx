import { useEffect, useMemo, useState } from "react";
import { ApolloProvider, useQuery } from "@apollo/client/react";
import { graphql } from "./gql";
import { newClient } from "./apollo";
import { forgetToken, saveToken, savedToken } from "./session";
import { SignIn } from "./SignIn";
import { Operations } from "./Operations";
import { OperationPage } from "./OperationPage";

const ViewerQuery = graphql(`
  query Viewer {
    viewer {
      actor
      organization
      roles
    }
  }
`);

export function App() {
  const [token, setToken] = useState<string | null>(savedToken());
  const [refusal, setRefusal] = useState<string | undefined>();
  const client = useMemo(() => (token ? newClient(token) : null), [token]);
  const signOut = (why?: string) => {
    forgetToken();
    client?.stop();
    setRefusal(why);
    setToken(null);
  };
  if (!token || !client) {
    return <SignIn error={refusal} onToken={(t) => { saveToken(t); setRefusal(undefined); setToken(t); }} />;
  }
  return (
    <ApolloProvider client={client}>
      <Shell onSignOut={signOut} />
    </ApolloProvider>
  );
}

function Shell({ onSignOut }: { onSignOut: (why?: string) => void }) {
  const { data, error } = useQuery(ViewerQuery);
  const route = useHashRoute();
  useEffect(() => {
    if (error) onSignOut(`Not signed in: ${error.message}`);
  }, [error, onSignOut]);
  const viewer = data?.viewer;
  return (
    <div className="shell">
      <header>
        <strong>Capstan</strong>
        {viewer && (
          <span className="viewer" aria-label="signed in as">
            {viewer.actor} · {viewer.organization} · {viewer.roles.join(", ")}
          </span>
        )}
        <a href="/graphiql">GraphiQL</a>
        <button type="button" onClick={() => onSignOut()}>Sign out</button>
      </header>
      <main>
        {route.startsWith("#/operations/") ? <OperationPage id={decodeURIComponent(route.slice("#/operations/".length))} /> : <Operations />}
      </main>
    </div>
  );
}

// useHashRoute follows location.hash: #/ is the dashboard, #/operations/<id>
// an operation (the server serves the console at / only).
function useHashRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const follow = () => setHash(location.hash);
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  return hash;
}

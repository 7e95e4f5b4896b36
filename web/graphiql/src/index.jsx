// Entry point for Capstan's embedded GraphiQL page.
// Bundled by build.mjs into server/graphiql/assets/graphiql.{js,css};
// everything (including fonts) is inlined so nothing is fetched from a CDN.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/graphiql.css';

const wsProtocol = window.location.protocol === 'https:' ? 'wss:' : 'ws:';

const fetcher = createGraphiQLFetcher({
  // Same-origin HTTP endpoint for queries and mutations.
  url: '/graphql',
  // Subscriptions go over the graphql-ws protocol on the same host.
  subscriptionUrl: `${wsProtocol}//${window.location.host}/graphql`,
});

const defaultHeaders = '{"Authorization": "Bearer <paste your token>"}';

function App() {
  return (
    <GraphiQL
      fetcher={fetcher}
      defaultHeaders={defaultHeaders}
      isHeadersEditorEnabled={true}
      shouldPersistHeaders={false}
      defaultEditorToolsVisibility="headers"
    />
  );
}

createRoot(document.getElementById('graphiql')).render(
  <React.StrictMode>
    <App />
  </React.StrictMode>,
);

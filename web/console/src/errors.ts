import { ServerError } from "@apollo/client/errors";

// The extensions of a GraphQL error as Apollo hands it over: the first
// error's code, and OVERFLOW's cursor to resume from.
type Extensions = Record<string, unknown> | undefined;

function extensionsOf(err: unknown): Extensions[] {
  return ((err as { errors?: { extensions?: Extensions }[] }).errors ?? []).map((e) => e.extensions);
}

// codeOf is a GraphQL error's extensions.code. A request the server
// refused before GraphQL (HTTP 401: no valid token) is UNAUTHENTICATED too.
export function codeOf(err: unknown): string | undefined {
  if (ServerError.is(err) && err.statusCode === 401) return "UNAUTHENTICATED";
  const code = extensionsOf(err)[0]?.code;
  return typeof code === "string" ? code : undefined;
}

// overflowCursor is the cursor an OVERFLOW error says to resume from.
export function overflowCursor(err: unknown): string | undefined {
  for (const ext of extensionsOf(err)) {
    if (ext?.code === "OVERFLOW" && typeof ext.cursor === "string") return ext.cursor;
  }
  return undefined;
}

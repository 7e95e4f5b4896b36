import { useState, type FormEvent } from "react";

// SignIn asks for a bearer token (from the tokens file, or the one
// `capstan serve` prints in dev mode).
export function SignIn({ onToken, error }: { onToken: (token: string) => void; error?: string }) {
  const [token, setToken] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (token.trim() !== "") onToken(token.trim());
  };
  return (
    <main className="signin">
      <h1><span className="brand-mark" aria-hidden="true">C</span>Capstan</h1>
      <p className="muted">Sign in with a bearer token: one from the server's tokens file, or the dev token <code>make run</code> prints.</p>
      <form onSubmit={submit}>
        <label htmlFor="token">Bearer token</label>
        <input id="token" name="token" type="password" autoComplete="off" autoFocus value={token} onChange={(e) => setToken(e.target.value)} />
        <button type="submit">Sign in</button>
        {error && <p role="alert" className="error alert">{error}</p>}
      </form>
    </main>
  );
}

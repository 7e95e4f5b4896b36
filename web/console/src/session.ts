// The bearer token lives in sessionStorage: it ends with the tab, and no
// other site can read it.
const key = "capstan.token";

export function savedToken(): string | null {
  return sessionStorage.getItem(key);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(key, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(key);
}

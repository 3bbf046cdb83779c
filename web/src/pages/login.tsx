/** Log in with a username and password; the server answers with an HttpOnly session cookie. */
import { useId, useState } from 'preact/hooks';
import { login } from '../lib/auth.js';

export function LoginPage({ reason }: { reason?: string }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const uid = useId();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await login(username, password);
    } catch (err) {
      setError((err as Error).message);
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login-page" id="main">
      <form class="card login" onSubmit={submit} aria-labelledby={`${uid}-h`}>
        <h1 id={`${uid}-h`}>
          <span class="brand">osm</span> Log in
        </h1>
        {reason && !error && <p class="muted">{reason}</p>}
        <div class="field">
          <label for={`${uid}-u`}>Username</label>
          <input id={`${uid}-u`} name="username" autoComplete="username" required autoFocus value={username} onInput={(e) => setUsername((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for={`${uid}-p`}>Password</label>
          <input id={`${uid}-p`} name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword((e.target as HTMLInputElement).value)} />
        </div>
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="btn primary" disabled={busy}>
          Log in
        </button>
      </form>
    </main>
  );
}

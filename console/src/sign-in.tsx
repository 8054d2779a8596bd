/** The sign-in form: a username and password exchanged at `{auth_url}/token` for the access token of this tab. */
import { useSignal } from '@preact/signals';
import { signIn, signInReason } from './session.js';

export function SignIn() {
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    busy.value = true;
    error.value = await signIn(String(form.get('username') ?? ''), String(form.get('password') ?? ''));
    busy.value = false;
  };
  return (
    <main class="sign-in" id="main">
      <h1>Device scenario console</h1>
      {signInReason.value !== null && (
        <p class="notice" role="status">
          {signInReason.value}
        </p>
      )}
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h2 id="sign-in-title">Sign in</h2>
        <label>
          Username
          <input name="username" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {error.value !== null && (
          <p class="error" role="alert">
            {error.value}
          </p>
        )}
        <button type="submit" disabled={busy.value}>
          Sign in
        </button>
      </form>
    </main>
  );
}

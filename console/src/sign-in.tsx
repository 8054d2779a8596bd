/**
 * The sign-in form: a username and password exchanged at `{auth_url}/token` for the tokens of this tab. When the
 * service answers that the user must set a new password first (an invited user's first sign-in, or after a reset: the
 * `new_password_required` challenge), a second step asks for it, twice, and signs in with it.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { Alert } from './device/focus.js';
import { signIn, signInReason } from './session.js';
import { UserText } from './user-text.js';

/**
 * The credentials of the first step, kept in memory only while the new password is asked for, and the password policy
 * in the service's words (the challenge's `passwordPolicy`), so that the page never states a policy of its own.
 */
interface Challenged {
  username: string;
  password: string;
  passwordPolicy: string;
}

/** The second step: the new password and its confirmation; signs in once the service has set it. */
function NewPassword({ challenged, onBack }: { challenged: Challenged; onBack: () => void }) {
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => {
    first.current?.focus();
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const newPassword = String(form.get('newPassword') ?? '');
    if (newPassword !== String(form.get('confirmPassword') ?? '')) {
      error.value = 'The two passwords differ: type the same new password in both fields.';
      return;
    }
    busy.value = true;
    error.value = null;
    const outcome = await signIn(challenged.username, challenged.password, newPassword);
    busy.value = false;
    if (outcome.kind === 'refused') error.value = outcome.message;
    else if (outcome.kind === 'new-password-required') error.value = outcome.detail;
  };
  return (
    <form onSubmit={submit} aria-labelledby="new-password-title">
      <h2 id="new-password-title">Set a new password</h2>
      <p>
        <UserText text={challenged.username} />, choose your own password to finish signing in: the one you signed in with was temporary
        (given at your invitation or by a password reset).
      </p>
      <p id="password-policy">
        {challenged.passwordPolicy === ''
          ? 'The service states its password policy if it refuses the new password.'
          : `The new password must have ${challenged.passwordPolicy}.`}
      </p>
      <label>
        New password
        <input ref={first} name="newPassword" type="password" autocomplete="new-password" required aria-describedby="password-policy" />
      </label>
      <label>
        Confirm the new password
        <input name="confirmPassword" type="password" autocomplete="new-password" required />
      </label>
      {error.value !== null && <Alert message={error.value} />}
      <button type="submit" class="primary" disabled={busy.value}>
        Set the password and sign in
      </button>
      <button type="button" onClick={onBack} disabled={busy.value}>
        Back to sign-in
      </button>
    </form>
  );
}

export function SignIn() {
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  const challenged = useSignal<Challenged | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const username = String(form.get('username') ?? '');
    const password = String(form.get('password') ?? '');
    busy.value = true;
    error.value = null;
    const outcome = await signIn(username, password);
    busy.value = false;
    if (outcome.kind === 'refused') error.value = outcome.message;
    else if (outcome.kind === 'new-password-required') challenged.value = { username, password, passwordPolicy: outcome.passwordPolicy };
  };
  return (
    <main class="sign-in" id="main">
      <h1>Device scenario console</h1>
      {signInReason.value !== null && (
        <p class="notice" role="status">
          {signInReason.value}
        </p>
      )}
      {challenged.value !== null ? (
        <NewPassword challenged={challenged.value} onBack={() => (challenged.value = null)} />
      ) : (
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
          {error.value !== null && <Alert message={error.value} />}
          <button type="submit" disabled={busy.value}>
            Sign in
          </button>
        </form>
      )}
    </main>
  );
}

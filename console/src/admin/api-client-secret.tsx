/** What the secret box says of an API client's secret (integrations/secret.tsx shows it once). */
import type { SecretWords } from '../integrations/secret.js';

/** An API client's secret: where it goes, and that the previous one keeps working for the overlap. */
export const CLIENT_SECRET_WORDS: SecretWords = {
  label: 'Client secret',
  use: (
    <>
      Store it now where the client's system keeps its secrets: with the client id, it gets tokens at the token endpoint (
      <code>grant_type=client_credentials</code>). Rotate the secret to get a new one.
    </>
  ),
  previous: 'The previous secret keeps working beside it until',
};

/** What the administration forms show when the service refuses a change. */
import { problemText } from '../session.js';

/**
 * The problem's `detail` (problemText) followed by each violation its `errors` names (`quotaBytes: …`), so that a
 * refused field is named: a 400's detail alone says only that the body is invalid.
 */
export function refusalText(error: unknown, status?: number): string {
  const violations = (error as { errors?: unknown } | undefined)?.errors;
  const named = Array.isArray(violations)
    ? violations.flatMap((violation: { path?: unknown; message?: unknown }) =>
        typeof violation.message === 'string' ? [`${String(violation.path ?? '')}: ${violation.message}`.replace(/^: /, '')] : [],
      )
    : [];
  return [problemText(error, status), ...named].join(' ');
}

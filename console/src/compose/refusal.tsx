/** A refusal of the service as the rollout forms show it: the problem's detail and each field its `errors` name. */
import { problemText } from '../session.js';
import { UserText } from '../user-text.js';

/** A refusal: the problem's detail and the paths its `errors` name (`waves.0: must be …`). */
export interface Refusal {
  text: string;
  paths: string[];
}

/** The refusal of an answer's problem body (`error`) with its HTTP status; the service not reached without a status. */
export function refusalOf(error: unknown, status?: number): Refusal {
  const errors = (error as { errors?: { path: string; message: string }[] } | undefined)?.errors ?? [];
  return { text: problemText(error, status), paths: errors.map((entry) => `${entry.path}: ${entry.message}`) };
}

/** The refusal, in an alert: its text and the paths its `errors` name; nothing without one. */
export function RefusalAlert({ refusal }: { refusal: Refusal | null }) {
  if (refusal === null) return null;
  return (
    <div role="alert" class="error">
      <p>
        <UserText text={refusal.text} />
      </p>
      {refusal.paths.length === 0 ? null : (
        <ul>
          {refusal.paths.map((path) => (
            <li key={path}>
              <UserText text={path} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * The upload of a scenario archive: the file field, the byte progress, and how the upload ended (the version stored,
 * or the service's refusal with every violation or the quota figures).
 */
import { useSignal } from '@preact/signals';
import type { RefObject } from 'preact';
import { useRef } from 'preact/hooks';
import { bytes, count } from '../format.js';
import { problemText } from '../session.js';
import { UserText } from '../user-text.js';
import {
  MAX_DIRECT_UPLOAD_BYTES,
  type StoredScenario,
  type UploadOutcome,
  type UploadProblem,
  type UploadProgress,
  uploadArchive,
} from './upload.js';

/**
 * The refusal of an archive with its violations (422): each as `path: message`, or the message alone when it has no
 * path (the archive as a whole, e.g. not a ZIP), and how many more were found than listed.
 */
function Violations({ problem, status, errors }: { problem: UploadProblem; status: number; errors: NonNullable<UploadProblem['errors']> }) {
  return (
    <section class="refusal" role="alert" aria-labelledby="refusal-title">
      <h3 id="refusal-title">The archive was refused</h3>
      <p>
        <UserText text={problemText(problem, status)} />
      </p>
      <ul class="violations">
        {errors.map((violation, index) => (
          // Violations have no id of their own: the list is replaced whole, never reordered.
          <li key={index}>
            {violation.path === '' ? null : (
              <>
                <code>
                  <UserText text={violation.path} />
                </code>
                :{' '}
              </>
            )}
            <UserText text={violation.message} />
          </li>
        ))}
      </ul>
      {typeof problem.errorCount === 'number' && problem.errorCount > errors.length && (
        <p>{count(problem.errorCount - errors.length)} more violation(s) were found; fix these and upload again to see them.</p>
      )}
    </section>
  );
}

/** A size in words and in bytes: `4 MiB (4,194,304 bytes)`. */
const bytesInFull = (value: number) => `${bytes(value)} (${count(value)} bytes)`;

/** The refusal of an archive that does not fit in the company's storage quota (413): the quota, used, available, its size. */
function QuotaRefusal({ problem, status, quotaBytes }: { problem: UploadProblem; status: number; quotaBytes: number }) {
  const used = problem.usedBytes ?? 0;
  return (
    <section class="refusal" role="alert" aria-labelledby="refusal-title">
      <h3 id="refusal-title">The archive does not fit in the storage quota</h3>
      <p>
        <UserText text={problemText(problem, status)} />
      </p>
      <dl class="facts">
        <dt>Storage quota</dt>
        <dd>{bytesInFull(quotaBytes)}</dd>
        <dt>Used</dt>
        <dd>{bytesInFull(used)}</dd>
        <dt>Available</dt>
        <dd>{bytesInFull(Math.max(0, quotaBytes - used))}</dd>
        {typeof problem.archiveBytes === 'number' && (
          <>
            <dt>This archive</dt>
            <dd>{bytesInFull(problem.archiveBytes)}</dd>
          </>
        )}
      </dl>
      <p>Delete versions no longer deployed, or ask for a larger quota.</p>
    </section>
  );
}

/** The refusal of an archive: every violation (422), the quota figures (413), else the problem's detail. */
function Refusal({ problem, status }: { problem: UploadProblem; status: number }) {
  if (status === 422 && Array.isArray(problem.errors)) return <Violations problem={problem} status={status} errors={problem.errors} />;
  if (status === 413 && typeof problem.quotaBytes === 'number') {
    return <QuotaRefusal problem={problem} status={status} quotaBytes={problem.quotaBytes} />;
  }
  return (
    <p class="error" role="alert">
      <UserText text={problemText(problem, status)} />
    </p>
  );
}

/** How the last upload ended. */
function Outcome({ outcome }: { outcome: UploadOutcome }) {
  if (outcome.kind === 'stored') {
    const { stored } = outcome;
    return (
      <p class="notice" role="status">
        Stored{' '}
        <strong class="mono">
          <UserText text={`${stored.id}@${stored.version}`} />
        </strong>{' '}
        (<UserText text={stored.name} />, {bytes(stored.size)}).
      </p>
    );
  }
  if (outcome.kind === 'refused') return <Refusal problem={outcome.problem} status={outcome.status} />;
  return (
    <p class="error" role="alert">
      <UserText text={outcome.message} />
    </p>
  );
}

/**
 * The upload's state: whether it runs, its byte progress, how it ended; `submit` uploads the file chosen in `input`
 * (refusing none or an empty one at once), clears the field once stored and calls `onStored`.
 */
function useUpload(company: string, input: RefObject<HTMLInputElement>, onStored: (stored: StoredScenario) => void) {
  const busy = useSignal(false);
  const progress = useSignal<UploadProgress | null>(null);
  const outcome = useSignal<UploadOutcome | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const file = input.current?.files?.[0];
    if (file === undefined) {
      outcome.value = { kind: 'failed', message: 'Choose a scenario archive (.zip) to upload.' };
      return;
    }
    if (file.size === 0) {
      outcome.value = { kind: 'failed', message: `${file.name} is empty: choose a scenario archive (.zip).` };
      return;
    }
    busy.value = true;
    outcome.value = null;
    const ended = await uploadArchive(company, file, (next) => {
      progress.value = next;
    });
    busy.value = false;
    outcome.value = ended;
    if (ended.kind === 'stored') {
      if (input.current !== null) input.current.value = '';
      onStored(ended.stored);
    }
  };
  return { busy, progress, outcome, submit };
}

/** The byte progress of the upload (`now`), and its phase in words while it runs (`busy`), in a live region. */
function ProgressView({ now, busy }: { now: UploadProgress | null; busy: boolean }) {
  return (
    <>
      {now !== null && (
        <div class="upload-progress">
          <label>
            Uploaded {count(now.sent)} of {count(now.total)} bytes
            <progress max={now.total} value={now.sent} />
          </label>
        </div>
      )}
      <div aria-live="polite" class="upload-phase">
        {busy && now !== null && (
          <p class="muted">{now.phase === 'sending' ? 'Sending the archive…' : 'Sent. The service is validating the archive…'}</p>
        )}
      </div>
    </>
  );
}

/**
 * The upload form of a company's scenario archives (offered only with `scenarios:write`).
 * @param onStored called with the stored version after a successful upload (the page then reloads its listing)
 */
export function UploadForm({ company, onStored }: { company: string; onStored: (stored: StoredScenario) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const { busy, progress, outcome, submit } = useUpload(company, input, onStored);
  return (
    <form class="upload" onSubmit={submit} aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a scenario version</h2>
      <p class="muted">
        A ZIP with scenario.json at its root: a new id adds a scenario, a new version of an existing id adds a version. Archives above{' '}
        {bytes(MAX_DIRECT_UPLOAD_BYTES)} go straight to the archive storage.
      </p>
      <div class="toolbar">
        <label>
          Scenario archive (.zip)
          <input ref={input} type="file" name="archive" accept=".zip,application/zip" required disabled={busy.value} />
        </label>
        <button type="submit" class="primary" disabled={busy.value}>
          Upload
        </button>
      </div>
      <ProgressView now={progress.value} busy={busy.value} />
      {outcome.value !== null && <Outcome outcome={outcome.value} />}
    </form>
  );
}

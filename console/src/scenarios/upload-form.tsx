/**
 * The upload of a scenario archive: the file field, the byte progress, and how the upload ended (the version stored,
 * or the service's refusal with every violation or the quota figures).
 */
import { useSignal } from '@preact/signals';
import { useRef } from 'preact/hooks';
import { bytes, count } from '../format.js';
import { problemText } from '../session.js';
import {
  MAX_DIRECT_UPLOAD_BYTES,
  type StoredScenario,
  type UploadOutcome,
  type UploadProblem,
  type UploadProgress,
  uploadArchive,
} from './upload.js';

/** The refusal of an archive: every violation (422), the quota figures (413), else the problem's detail. */
function Refusal({ problem, status }: { problem: UploadProblem; status: number }) {
  if (status === 422 && Array.isArray(problem.errors)) {
    const listed = problem.errors.length;
    return (
      <section class="refusal" role="alert" aria-labelledby="refusal-title">
        <h3 id="refusal-title">The archive was refused</h3>
        <p>{problemText(problem, status)}</p>
        <ul class="violations">
          {problem.errors.map((violation, index) => (
            // Violations have no id of their own: the list is replaced whole, never reordered.
            <li key={index}>
              <code>{violation.path}</code>: {violation.message}
            </li>
          ))}
        </ul>
        {typeof problem.errorCount === 'number' && problem.errorCount > listed && (
          <p>{count(problem.errorCount - listed)} more violation(s) were found; fix these and upload again to see them.</p>
        )}
      </section>
    );
  }
  if (status === 413 && typeof problem.quotaBytes === 'number') {
    const used = problem.usedBytes ?? 0;
    return (
      <section class="refusal" role="alert" aria-labelledby="refusal-title">
        <h3 id="refusal-title">The archive does not fit in the storage quota</h3>
        <p>{problemText(problem, status)}</p>
        <dl class="facts">
          <dt>Storage quota</dt>
          <dd>
            {bytes(problem.quotaBytes)} ({count(problem.quotaBytes)} bytes)
          </dd>
          <dt>Used</dt>
          <dd>
            {bytes(used)} ({count(used)} bytes)
          </dd>
          <dt>Available</dt>
          <dd>
            {bytes(Math.max(0, problem.quotaBytes - used))} ({count(Math.max(0, problem.quotaBytes - used))} bytes)
          </dd>
          {typeof problem.archiveBytes === 'number' && (
            <>
              <dt>This archive</dt>
              <dd>
                {bytes(problem.archiveBytes)} ({count(problem.archiveBytes)} bytes)
              </dd>
            </>
          )}
        </dl>
        <p>Delete versions no longer deployed, or ask for a larger quota.</p>
      </section>
    );
  }
  return (
    <p class="error" role="alert">
      {problemText(problem, status)}
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
          {stored.id}@{stored.version}
        </strong>{' '}
        ({stored.name}, {bytes(stored.size)}).
      </p>
    );
  }
  if (outcome.kind === 'refused') return <Refusal problem={outcome.problem} status={outcome.status} />;
  return (
    <p class="error" role="alert">
      {outcome.message}
    </p>
  );
}

/**
 * The upload form of a company's scenario archives (offered only with `scenarios:write`).
 * @param onStored called with the stored version after a successful upload (the page then reloads its listing)
 */
export function UploadForm({ company, onStored }: { company: string; onStored: (stored: StoredScenario) => void }) {
  const input = useRef<HTMLInputElement>(null);
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
  const now = progress.value;
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
      {now !== null && (
        <div class="upload-progress">
          <label>
            Uploaded {count(now.sent)} of {count(now.total)} bytes
            <progress max={now.total} value={now.sent} />
          </label>
        </div>
      )}
      <div aria-live="polite" class="upload-phase">
        {busy.value && now !== null && (
          <p class="muted">{now.phase === 'sending' ? 'Sending the archive…' : 'Sent. The service is validating the archive…'}</p>
        )}
      </div>
      {outcome.value !== null && <Outcome outcome={outcome.value} />}
    </form>
  );
}

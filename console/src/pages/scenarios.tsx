/**
 * The scenarios page (`#/scenarios?company=<id>[&limit=<n>]`): a company's scenarios and their versions (the listing
 * paged by the API's own `limit` and `cursor`, "Show more" for the next page), its storage used against the quota, the
 * skeleton archive to start from, and, with `scenarios:write`, the upload of an archive.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { components } from '../../../client/index.js';
import { limitOf, useDefaultCompany } from '../company-listing.js';
import { bytes, count, dateTime } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { here } from '../router.js';
import { UploadForm } from '../scenarios/upload-form.js';
import { api, can, claims, problemText } from '../session.js';
import { UserText } from '../user-text.js';

type Scenario = components['schemas']['Scenario'];
type ScenarioDetail = components['schemas']['ScenarioDetail'];
type StorageUsage = components['schemas']['StorageUsage'];

/** A listed scenario with its versions' details, or why they could not be read. */
interface ListedScenario {
  summary: Scenario;
  detail?: ScenarioDetail;
  error?: string;
}

/** Reads each scenario's versions (size, upload time): one request per scenario of the page, in parallel. */
async function withDetails(company: string, items: Scenario[]): Promise<ListedScenario[]> {
  return Promise.all(
    items.map(async (summary): Promise<ListedScenario> => {
      try {
        const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}', {
          params: { path: { companyId: company, scenarioId: summary.id } },
        });
        return data === undefined ? { summary, error: problemText(error, response.status) } : { summary, detail: data };
      } catch {
        return { summary, error: problemText(undefined) };
      }
    }),
  );
}

/** The company's storage: a meter of the bytes used against the quota, and the figures in words. */
function Usage({ usage }: { usage: StorageUsage }) {
  return (
    <section aria-labelledby="usage-title" class="usage">
      <h2 id="usage-title">Storage</h2>
      <label>
        Storage used
        <meter min={0} max={Math.max(1, usage.quotaBytes)} value={usage.usedBytes} />
      </label>
      <p class="usage-figures">
        {bytes(usage.usedBytes)} of {bytes(usage.quotaBytes)} used ({bytes(usage.availableBytes)} available; {count(usage.usedBytes)} of{' '}
        {count(usage.quotaBytes)} bytes).
      </p>
    </section>
  );
}

/** The `filename` of a Content-Disposition header, else `fallback`. */
function filenameOf(disposition: string | null, fallback: string): string {
  const match = /filename="?([^";]+)"?/i.exec(disposition ?? '');
  return match?.[1] ?? fallback;
}

/** "Download the skeleton": fetches the skeleton with the token and saves it under the name the service gives it. */
function SkeletonDownload({ company }: { company: string }) {
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  const download = async () => {
    busy.value = true;
    error.value = null;
    try {
      const {
        data,
        error: problem,
        response,
      } = await api.main.GET('/companies/{companyId}/resources/scenarios/skeleton.zip', {
        params: { path: { companyId: company }, query: {} },
        parseAs: 'blob',
      });
      if (data === undefined) {
        error.value = problemText(problem, response.status);
        return;
      }
      // A link to an object URL of the bytes: the download needs the token, which a plain link could not send.
      const url = URL.createObjectURL(data);
      const link = document.createElement('a');
      link.href = url;
      link.download = filenameOf(response.headers.get('content-disposition'), 'skeleton.zip');
      document.body.append(link);
      link.click();
      link.remove();
      // Revoked once the browser has had time to start the download from it.
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch {
      error.value = problemText(undefined);
    } finally {
      busy.value = false;
    }
  };
  return (
    <section aria-labelledby="skeleton-title">
      <h2 id="skeleton-title">Start a scenario</h2>
      <p>
        The skeleton is a ZIP with a scenario.json (a fresh id, version 1.0.0), a thumbnail, an asset and a README explaining each file.
      </p>
      <button type="button" onClick={download} disabled={busy.value}>
        Download the skeleton
      </button>
      {error.value !== null && (
        <p class="error" role="alert">
          <UserText text={error.value} />
        </p>
      )}
    </section>
  );
}

/** One scenario's versions, in upload order. */
function Versions({ listed }: { listed: ListedScenario }) {
  const { summary, detail, error } = listed;
  if (detail === undefined) {
    return (
      <p class="error" role="alert">
        The versions of <UserText text={summary.id} /> could not be read: <UserText text={error ?? ''} />
      </p>
    );
  }
  return (
    <table class="versions">
      <caption>
        Versions of <UserText text={summary.id} />
      </caption>
      <thead>
        <tr>
          <th scope="col">Version</th>
          <th scope="col">Uploaded</th>
          <th scope="col">Size</th>
          <th scope="col">Uploaded by</th>
          <th scope="col">SHA-256</th>
        </tr>
      </thead>
      <tbody>
        {detail.versions.map((version) => (
          <tr key={version.version}>
            <td class="mono">
              <UserText text={version.version} />
            </td>
            <td>
              <time dateTime={version.created}>{dateTime(version.created)}</time>
            </td>
            <td>
              <span title={`${count(version.size)} bytes`}>{bytes(version.size)}</span>
            </td>
            <td>
              <UserText text={version.uploadedBy} />
            </td>
            <td class="mono sha">{version.sha256.slice(0, 12)}…</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The company's scenarios, a page at a time (`limit` per page, the API's default when undefined), each with its
 * versions; read afresh when the company, the page size or `revision` changes.
 */
function useListing(company: string, limit: number | undefined, revision: number) {
  return usePagedListing<ListedScenario, string>(
    [company, limit, revision],
    company !== '',
    async (cursor, isCurrent) => {
      const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/scenarios', {
        params: {
          path: { companyId: company },
          query: { ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) },
        },
      });
      if (data === undefined) return { failure: problemText(error, response.status) };
      // Each scenario's versions are read too, unless a newer read has started meanwhile (its answer is dropped).
      return { items: isCurrent() ? await withDetails(company, data.items) : [], nextCursor: data.nextCursor };
    },
    () => problemText(undefined),
  );
}

/** The company's storage usage, read afresh when the company or `revision` changes; a late answer for another is dropped. */
function useUsage(company: string, revision: number) {
  const usage = useSignal<StorageUsage | null>(null);
  const usageError = useSignal<string | null>(null);
  useEffect(() => {
    if (company === '') return;
    let current = true;
    void (async () => {
      try {
        const { data, error, response } = await api.main.GET('/companies/{companyId}/resources/scenarios/usage', {
          params: { path: { companyId: company } },
        });
        if (!current) return;
        usage.value = data ?? null;
        usageError.value = data === undefined ? problemText(error, response.status) : null;
      } catch {
        if (current) usageError.value = problemText(undefined);
      }
    })();
    return () => {
      current = false;
    };
  }, [company, revision]);
  return { usage, usageError };
}

/**
 * The listing and usage of `company`, read afresh when the company, the page size or `reload()` (after an upload is
 * stored) asks; `more()` reads the listing's next page.
 */
function useCatalog(company: string, limit: number | undefined) {
  // Bumped after an upload is stored: the listing and usage are read again.
  const revision = useSignal(0);
  const listing = useListing(company, limit, revision.value);
  const { usage, usageError } = useUsage(company, revision.value);
  const reload = () => {
    revision.value += 1;
  };
  return {
    listed: listing.items.value ?? [],
    listError: listing.failure.value ?? listing.moreFailure.value,
    loading: listing.loading.value,
    hasMore: listing.nextCursor.value !== null,
    more: listing.more,
    usage,
    usageError,
    reload,
  };
}

/** The scenarios table: one row per listed scenario (id, name and description, latest version, versions, last upload). */
function ScenarioTable({ company, scenarios }: { company: string; scenarios: ListedScenario[] }) {
  return (
    <table class="scenarios">
      <caption>
        Scenarios of <UserText text={company} />
      </caption>
      <thead>
        <tr>
          <th scope="col">Id</th>
          <th scope="col">Name</th>
          <th scope="col">Latest version</th>
          <th scope="col">Versions</th>
          <th scope="col">Last upload</th>
        </tr>
      </thead>
      <tbody>
        {scenarios.map(({ summary }) => (
          <tr key={summary.id}>
            <td class="mono">
              <UserText text={summary.id} />
            </td>
            <td>
              <UserText text={summary.name} />
              {summary.description !== null && (
                <div class="muted">
                  <UserText text={summary.description} />
                </div>
              )}
            </td>
            <td class="mono">
              <UserText text={summary.latestVersion} />
            </td>
            <td class="mono">
              <UserText text={summary.versions.join(', ')} />
            </td>
            <td>
              <time dateTime={summary.updated}>{dateTime(summary.updated)}</time>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The catalog section: the listing's error, how many scenarios are shown (live), their table, "Show more scenarios"
 * while `hasMore` (disabled while `loading`), and each scenario's versions.
 */
function Catalog(props: {
  company: string;
  scenarios: ListedScenario[];
  error: string | null;
  loading: boolean;
  hasMore: boolean;
  onMore: () => void;
}) {
  const { company, scenarios, error, loading, hasMore, onMore } = props;
  return (
    <section aria-labelledby="catalog-title">
      <h2 id="catalog-title">Scenarios and versions</h2>
      {error !== null && (
        <p class="error" role="alert">
          The scenarios could not be read: <UserText text={error} />
        </p>
      )}
      <p aria-live="polite" class="muted">
        {loading ? 'Loading the scenarios…' : `${count(scenarios.length)} scenario(s) shown${hasMore ? '; more exist' : ''}.`}
      </p>
      {scenarios.length > 0 && <ScenarioTable company={company} scenarios={scenarios} />}
      {hasMore && (
        <button type="button" disabled={loading} onClick={onMore}>
          Show more scenarios
        </button>
      )}
      {scenarios.map((item) => (
        <Versions key={item.summary.id} listed={item} />
      ))}
    </section>
  );
}

/** The page of `#/scenarios?company=<id>`: the company defaults to the token's first one (written into the URL). */
export function ScenariosPage() {
  const { query } = here.value;
  const companies = claims.value?.companies ?? [];
  const company = query.get('company') ?? '';
  useDefaultCompany('/scenarios', company, companies[0], query);
  const catalog = useCatalog(company, limitOf(query));

  if (company === '') {
    return (
      <main id="main">
        <h1>Scenarios</h1>
        <p>{companies.length === 0 ? 'Your account belongs to no company: there are no scenarios to show.' : 'Choosing a company…'}</p>
      </main>
    );
  }
  return (
    <main id="main" class="scenarios-page">
      <h1>
        Scenarios of <UserText text={company} />
      </h1>
      {catalog.usage.value !== null && <Usage usage={catalog.usage.value} />}
      {catalog.usageError.value !== null && (
        <p class="error" role="alert">
          The storage usage could not be read: <UserText text={catalog.usageError.value} />
        </p>
      )}
      <SkeletonDownload company={company} />
      {can('scenarios:write') && <UploadForm key={company} company={company} onStored={catalog.reload} />}
      <Catalog
        company={company}
        scenarios={catalog.listed}
        error={catalog.listError}
        loading={catalog.loading}
        hasMore={catalog.hasMore}
        onMore={catalog.more}
      />
    </main>
  );
}

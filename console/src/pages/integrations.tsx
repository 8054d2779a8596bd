/**
 * The Integrations page (`#/integrations?company=<id>[&webhook=<id>[&cursor=<c>]]`, for `webhooks:read`): the
 * company's webhooks a page at a time, "Add webhook" for `webhooks:write`, and the webhook the URL names with its
 * actions and its deliveries (the page of them the URL's `cursor` names). A secret is shown once, in the page's state
 * only: never in the URL or the tab's storage.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useDefaultCompany } from '../company-listing.js';
import { Alert } from '../device/focus.js';
import { AddWebhook } from '../integrations/add-webhook.js';
import { loadWebhook, loadWebhooks, type Webhook } from '../integrations/api.js';
import { WebhookPanel } from '../integrations/webhook-panel.js';
import { WebhooksTable } from '../integrations/webhooks-table.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import { here, hrefOf, navigate } from '../router.js';
import { can, claims, problemText } from '../session.js';
import { UserText } from '../user-text.js';
import { NoCompany } from './alerts.js';

/** The webhook `webhookId` of `company` as the API gives it (none without an id), and why it could not be read. */
function useWebhook(company: string, webhookId: string | null) {
  const webhook = useSignal<Webhook | null>(null);
  const error = useSignal<string | null>(null);
  useEffect(() => {
    webhook.value = null;
    error.value = null;
    if (webhookId === null || company === '') return;
    let current = true;
    void loadWebhook(company, webhookId).then((loaded) => {
      if (!current) return;
      if (loaded.ok) webhook.value = loaded.data;
      else error.value = loaded.message;
    });
    return () => {
      current = false;
    };
  }, [company, webhookId]);
  return { webhook, error };
}

/** The company's webhooks, a page at a time, read again when `revision` changes; "Add webhook" for `webhooks:write`. */
function WebhookList({ company, revision, onCreated }: { company: string; revision: number; onCreated: () => void }) {
  const listed = usePagedListing<Webhook, string>(
    [company, revision],
    true,
    async (cursor) => {
      const loaded = await loadWebhooks(company, cursor);
      return loaded.ok ? loaded.data : { failure: loaded.message };
    },
    () => problemText(undefined),
  );
  return (
    <>
      {can('webhooks:write') ? <AddWebhook company={company} onCreated={onCreated} /> : null}
      <h2>Webhooks</h2>
      <ListingStatus listing={listed} what="webhooks" one="webhook" />
      {listed.items.value !== undefined && listed.items.value.length === 0 ? (
        <p class="muted">No webhook yet.</p>
      ) : (
        <WebhooksTable company={company} webhooks={listed.items.value ?? []} revision={revision} />
      )}
      <ShowMore listing={listed} what="webhooks" />
    </>
  );
}

/** The Integrations page (see the module comment). */
export function IntegrationsPage() {
  const query = here.value.query;
  const company = query.get('company') ?? '';
  const webhookId = query.get('webhook');
  useDefaultCompany('/integrations', company, claims.value?.companies[0], query);
  const revision = useSignal(0);
  const notice = useSignal<string | null>(null);
  const { webhook, error } = useWebhook(company, webhookId);
  const shown = webhook.value?.id === webhookId ? webhook.value : null;
  if (company === '') return <NoCompany title="Integrations" />;
  return (
    <main id="main" class="admin-page">
      <h1>Integrations</h1>
      <p>
        Webhooks send the service's events (deployments, connections, rollouts, commands, alerts) to your systems as they happen, signed as
        the Standard Webhooks specification says.
      </p>
      <p role="status" class="admin-status">
        {notice.value === null ? null : <UserText text={notice.value} />}
      </p>
      <WebhookList company={company} revision={revision.value} onCreated={() => (revision.value += 1)} />
      {error.value === null ? null : <Alert message={error.value} />}
      {shown === null ? null : (
        <WebhookPanel
          key={shown.id}
          company={company}
          webhook={shown}
          query={query}
          onChanged={(changed) => {
            webhook.value = changed;
            revision.value += 1;
          }}
          onTested={() => (revision.value += 1)}
          onDeleted={(message) => {
            notice.value = message;
            revision.value += 1;
            navigate('/integrations', { company });
          }}
        />
      )}
      {webhookId === null || shown !== null || error.value !== null ? null : <p class="muted">Loading the webhook…</p>}
      {webhookId === null ? null : (
        <p>
          <a href={hrefOf('/integrations', { company })}>Close the webhook</a>
        </p>
      )}
    </main>
  );
}

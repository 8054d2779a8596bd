/**
 * The company's webhooks on the Integrations page: URL (a link that opens the webhook), events, enabled, failing
 * since, and the state of its last deliveries (one small read of its deliveries per webhook shown, again while one is
 * pending: a company has at most 100 webhooks).
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { dateTime, humanize } from '../format.js';
import { hrefOf } from '../router.js';
import { UserText } from '../user-text.js';
import { type Delivery, LAST_DELIVERIES, loadDeliveries, type Webhook } from './api.js';

/** The webhook's page: the company's Integrations page with the webhook open. */
export function webhookHref(company: string, webhookId: string): string {
  return hrefOf('/integrations', { company, webhook: webhookId });
}

/** How often the last deliveries are read again while one of them is PENDING, ms. */
const PENDING_REFRESH_MS = 3_000;

/**
 * The states of a webhook's last deliveries, newest first, in words (`Succeeded, Failed`): read once per revision,
 * and again every few seconds while one of them is PENDING (not while the tab is hidden).
 */
function LastDeliveries({ company, webhookId, revision }: { company: string; webhookId: string; revision: number }) {
  const states = useSignal<Delivery['state'][] | string | undefined>(undefined);
  const reads = useSignal(0);
  useEffect(() => {
    let current = true;
    void loadDeliveries(company, webhookId, LAST_DELIVERIES).then((loaded) => {
      if (current) states.value = loaded.ok ? loaded.data.items.map((delivery) => delivery.state) : loaded.message;
    });
    return () => {
      current = false;
    };
  }, [company, webhookId, revision, reads.value]);
  const value = states.value;
  const pending = Array.isArray(value) && value.includes('PENDING');
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reads.value += 1;
    }, PENDING_REFRESH_MS);
    return () => clearInterval(timer);
  }, [pending]);
  if (value === undefined) return <span class="muted">Loading…</span>;
  if (typeof value === 'string') return <UserText text={value} />;
  if (value.length === 0) return <span class="muted">None yet</span>;
  return <span class={value[0] === 'FAILED' ? 'warning' : undefined}>{value.map(humanize).join(', ')}</span>;
}

/** The webhooks table. */
export function WebhooksTable({ company, webhooks, revision }: { company: string; webhooks: Webhook[]; revision: number }) {
  return (
    <table class="admin-table">
      <caption>
        Webhooks of <UserText text={company} />
      </caption>
      <thead>
        <tr>
          <th scope="col">URL</th>
          <th scope="col">Events</th>
          <th scope="col">Enabled</th>
          <th scope="col">Failing since</th>
          <th scope="col">Last deliveries, newest first</th>
        </tr>
      </thead>
      <tbody>
        {webhooks.map((webhook) => (
          <tr key={webhook.id}>
            <td class="mono">
              <a href={webhookHref(company, webhook.id)}>
                <UserText text={webhook.url} />
              </a>
              {webhook.description === null || webhook.description === '' ? null : (
                <div class="muted">
                  <UserText text={webhook.description} />
                </div>
              )}
            </td>
            <td class="mono">{webhook.events.join(', ')}</td>
            <td>{webhook.enabled ? 'Yes' : 'No'}</td>
            <td class={webhook.failingSince === null ? undefined : 'warning'}>
              {webhook.failingSince === null ? '—' : <time dateTime={webhook.failingSince}>{dateTime(webhook.failingSince)}</time>}
            </td>
            <td>
              <LastDeliveries company={company} webhookId={webhook.id} revision={revision} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

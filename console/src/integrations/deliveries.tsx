/**
 * A webhook's deliveries on the Integrations page: a page of them (the URL's `cursor`, newest first), each with its
 * event type, state, attempts, last status and next attempt, its attempts in a `<details>` (time, status, error), and
 * "Redeliver" (for `webhooks:write`). While a delivery shown is PENDING, the page is read again every few seconds
 * (not while the tab is hidden), so a test event's SUCCEEDED shows without a reload.
 */
import { useSignal } from '@preact/signals';
import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { Alert } from '../device/focus.js';
import { count, dateTime } from '../format.js';
import { hrefOf } from '../router.js';
import { can } from '../session.js';
import { UserText } from '../user-text.js';
import { DELIVERIES_PAGE, type Delivery, loadDeliveries, redeliver } from './api.js';

/** How often a page with a PENDING delivery is read again, ms. */
const PENDING_REFRESH_MS = 3_000;

/** A delivery's state in words, with why a FAILED one stopped. */
function stateText(delivery: Delivery): string {
  if (delivery.state === 'PENDING') return delivery.attempts === 0 ? 'Pending: not sent yet' : 'Pending: retrying';
  if (delivery.state === 'SUCCEEDED') return 'Succeeded';
  return 'Failed: no attempt left';
}

/** One attempt's outcome: the receiver's status, or that none came. */
function statusText(status: number | null): string {
  return status === null ? 'No answer' : String(status);
}

/** The attempts of a delivery, oldest first, in a `<details>`. */
function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.history.length === 0) return <span class="muted">None yet</span>;
  return (
    <details>
      <summary>
        {count(delivery.attempts)} {delivery.attempts === 1 ? 'attempt' : 'attempts'}
      </summary>
      <ol class="delivery-attempts">
        {delivery.history.map((attempt) => (
          <li key={attempt.at}>
            <time dateTime={attempt.at}>{dateTime(attempt.at)}</time>: {statusText(attempt.status)}
            {attempt.durationMs === null ? '' : ` in ${count(Math.round(attempt.durationMs))} ms`}
            {attempt.error === null ? null : (
              <>
                {' — '}
                <UserText text={attempt.error} />
              </>
            )}
          </li>
        ))}
      </ol>
    </details>
  );
}

/** Where the deliveries listing stands, and how to read it again. */
interface DeliveriesState {
  items: Delivery[] | undefined;
  nextCursor: string | null;
  failure: string | null;
  reload: () => void;
}

/** The page of deliveries at `cursor`; read again on reload(), and every few seconds while one is PENDING. */
function useDeliveries(company: string, webhookId: string, cursor: string | undefined, revision: number): DeliveriesState {
  const items = useSignal<Delivery[] | undefined>(undefined);
  const nextCursor = useSignal<string | null>(null);
  const failure = useSignal<string | null>(null);
  const reads = useSignal(0);
  useEffect(() => {
    items.value = undefined;
  }, [company, webhookId, cursor]);
  useEffect(() => {
    let current = true;
    void loadDeliveries(company, webhookId, DELIVERIES_PAGE, cursor).then((loaded) => {
      if (!current) return;
      if (loaded.ok) {
        items.value = loaded.data.items;
        nextCursor.value = loaded.data.nextCursor;
        failure.value = null;
      } else failure.value = loaded.message;
    });
    return () => {
      current = false;
    };
  }, [company, webhookId, cursor, revision, reads.value]);
  const pending = items.value?.some((delivery) => delivery.state === 'PENDING') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reads.value += 1;
    }, PENDING_REFRESH_MS);
    return () => clearInterval(timer);
  }, [pending]);
  return { items: items.value, nextCursor: nextCursor.value, failure: failure.value, reload: () => (reads.value += 1) };
}

/** "Redeliver": one new series of attempts of the delivery, then the page read again. */
function RedeliverButton(props: { company: string; webhookId: string; delivery: Delivery; onDone: (message: string) => void }) {
  const busy = useSignal(false);
  const run = async () => {
    busy.value = true;
    const answer = await redeliver(props.company, props.webhookId, props.delivery.id);
    busy.value = false;
    props.onDone(answer.ok ? `The ${props.delivery.type} delivery is sent again.` : answer.message);
  };
  return (
    <button type="button" onClick={run} disabled={busy.value}>
      Redeliver
      <span class="visually-hidden">
        {' '}
        {props.delivery.type} of {dateTime(props.delivery.created)}
      </span>
    </button>
  );
}

/** The deliveries table; with `write`, each row's Redeliver button as `redeliverButton` makes it. */
function DeliveriesTable(props: { items: Delivery[]; write: boolean; redeliverButton: (delivery: Delivery) => JSX.Element }) {
  return (
    <table class="admin-table deliveries">
      <caption>Deliveries, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Event type</th>
          <th scope="col">Created</th>
          <th scope="col">State</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last status</th>
          <th scope="col">Next attempt</th>
          {props.write ? <th scope="col">Action</th> : null}
        </tr>
      </thead>
      <tbody>
        {props.items.map((delivery) => (
          <tr key={delivery.id}>
            <td class="mono">{delivery.type}</td>
            <td>
              <time dateTime={delivery.created}>{dateTime(delivery.created)}</time>
            </td>
            <td class={delivery.state === 'FAILED' ? 'warning' : undefined}>{stateText(delivery)}</td>
            <td>
              <Attempts delivery={delivery} />
            </td>
            <td>{delivery.attempts === 0 ? '—' : statusText(delivery.lastStatus)}</td>
            <td>
              {delivery.nextAttemptAt === null ? '—' : <time dateTime={delivery.nextAttemptAt}>{dateTime(delivery.nextAttemptAt)}</time>}
            </td>
            {props.write ? <td>{props.redeliverButton(delivery)}</td> : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the deliveries section shows: the company, the webhook, the URL's query (its `cursor`), and a revision. */
export interface DeliveriesProps {
  company: string;
  webhookId: string;
  query: URLSearchParams;
  /** Changing it reads the page again (a test event was sent). */
  revision: number;
}

/** The deliveries section (see the module comment). */
export function Deliveries({ company, webhookId, query, revision }: DeliveriesProps) {
  const cursor = query.get('cursor') ?? undefined;
  const state = useDeliveries(company, webhookId, cursor, revision);
  const message = useSignal('');
  const write = can('webhooks:write');
  const pageHref = (next: string | null) => {
    const params = new URLSearchParams(query);
    params.delete('cursor');
    if (next !== null) params.set('cursor', next);
    return hrefOf('/integrations', params);
  };
  return (
    <section aria-labelledby="deliveries-title">
      <h3 id="deliveries-title">Deliveries</h3>
      <div class="toolbar">
        <button type="button" onClick={state.reload}>
          Refresh deliveries
        </button>
      </div>
      <p role="status" class="status-line">
        {message.value === '' ? state.items === undefined ? 'Loading the deliveries…' : '' : <UserText text={message.value} />}
      </p>
      {state.failure === null ? null : <Alert message={state.failure} />}
      {state.items !== undefined && state.items.length === 0 ? (
        <p class="muted">{cursor === undefined ? 'Nothing was delivered to this webhook yet.' : 'No more deliveries.'}</p>
      ) : null}
      {state.items === undefined || state.items.length === 0 ? null : (
        <DeliveriesTable
          items={state.items}
          write={write}
          redeliverButton={(delivery) => (
            <RedeliverButton
              company={company}
              webhookId={webhookId}
              delivery={delivery}
              onDone={(text) => {
                message.value = text;
                state.reload();
              }}
            />
          )}
        />
      )}
      <nav aria-label="Deliveries pages" class="toolbar">
        {cursor === undefined ? null : <a href={pageHref(null)}>Newest deliveries</a>}
        {state.nextCursor === null ? null : <a href={pageHref(state.nextCursor)}>Older deliveries</a>}
      </nav>
    </section>
  );
}

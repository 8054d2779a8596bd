/**
 * The company's alert rules on the Alerts page: name, the devices it watches (its query, linked to the fleet page
 * with that search), its condition in words, who made it; and for `alerts:write`, "Delete" (confirmed).
 */
import { useSignal } from '@preact/signals';
import { Alert, InlineConfirm } from '../device/focus.js';
import { dateTime } from '../format.js';
import { can } from '../session.js';
import { UserText } from '../user-text.js';
import { type AlertRule, deleteRule } from './api.js';
import { ruleFleetHref } from './links.js';
import { conditionText, readableQuery } from './words.js';

/** A rule's query as a person reads it (`location.name=Lyon & connection.state=CONNECTED`), or "Every device". */
function queryText(query: string): string {
  return readableQuery(query) || 'Every device';
}

/** One rule's row; with `write`, its Delete button (which opens the confirmation). */
function RuleRow(props: { rule: AlertRule; write: boolean; busy: boolean; onDelete: () => void }) {
  const { rule } = props;
  return (
    <tr>
      <td>
        <UserText text={rule.name} />
      </td>
      <td class="mono">
        <a href={ruleFleetHref(rule.query)}>
          <UserText text={queryText(rule.query)} />
        </a>
      </td>
      <td>{conditionText(rule.condition)}</td>
      <td>
        <time dateTime={rule.updated}>{dateTime(rule.updated)}</time> by <UserText text={rule.by} />
      </td>
      {props.write ? (
        <td>
          <button type="button" onClick={props.onDelete} disabled={props.busy}>
            Delete<span class="visually-hidden"> rule {rule.name}</span>
          </button>
        </td>
      ) : null}
    </tr>
  );
}

/** The deletion's confirmation, in the page. */
function DeleteConfirm(props: { rule: AlertRule; busy: boolean; onConfirm: () => void; onCancel: () => void }) {
  return (
    <InlineConfirm
      id="rule-delete-title"
      title={
        <>
          Delete the rule <UserText text={props.rule.name} />?
        </>
      }
      consequence="Its open alerts are resolved, and it raises none again."
      confirmLabel={
        <>
          Delete <UserText text={props.rule.name} />
        </>
      }
      busy={props.busy}
      focusKey={props.rule.id}
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    />
  );
}

/** The rules table, with the deletion's confirmation under it; `onDeleted` after a deletion. */
export function RulesTable({ company, rules, onDeleted }: { company: string; rules: AlertRule[]; onDeleted: (rule: AlertRule) => void }) {
  const deleting = useSignal<AlertRule | null>(null);
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const write = can('alerts:write');
  const remove = async (rule: AlertRule) => {
    busy.value = true;
    const answer = await deleteRule(company, rule.id);
    busy.value = false;
    error.value = answer.ok ? null : answer.message;
    deleting.value = null;
    if (answer.ok) onDeleted(rule);
  };
  const chosen = deleting.value;
  return (
    <>
      <table class="admin-table">
        <caption>
          Alert rules of <UserText text={company} />
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Devices watched</th>
            <th scope="col">Condition</th>
            <th scope="col">Made</th>
            {write ? <th scope="col">Action</th> : null}
          </tr>
        </thead>
        <tbody>
          {rules.map((rule) => (
            <RuleRow key={rule.id} rule={rule} write={write} busy={busy.value} onDelete={() => (deleting.value = rule)} />
          ))}
        </tbody>
      </table>
      {chosen === null ? null : (
        <DeleteConfirm rule={chosen} busy={busy.value} onConfirm={() => void remove(chosen)} onCancel={() => (deleting.value = null)} />
      )}
      {error.value === null ? null : <Alert message={error.value} />}
    </>
  );
}

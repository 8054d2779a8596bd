/**
 * The calls of the command rollout composer: the commands the search's devices advertise (the filters endpoint with the
 * search applied, read once the form opens), and a COMMAND rollout's preview or creation.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { components } from '../../../client/index.js';
import { DEVICE_TYPE, recordOf } from '../fleet/search-query.js';
import type { RolloutPreview } from '../rollouts/api.js';
import { navigate } from '../router.js';
import { api, problemText } from '../session.js';
import { type CommandPlan, type CommandSuggestion, commandSuggestions } from './command-plan.js';
import { targetQueryOf } from './plan.js';
import { type Refusal, refusalOf } from './refusal.js';

/** A rollout's preview, as the service answers it. */
export type CommandPreviewAnswer = RolloutPreview;

/** The commands the search's devices advertise with their counts; undefined while read, or the message of a failure. */
export function useCommandSuggestions(query: URLSearchParams): CommandSuggestion[] | undefined | { failure: string } {
  const suggestions = useSignal<CommandSuggestion[] | undefined | { failure: string }>(undefined);
  const key = targetQueryOf(query).toString();
  useEffect(() => {
    const params = targetQueryOf(query);
    params.append('type', DEVICE_TYPE);
    api.main
      .GET('/resources/search/filters', { params: { query: recordOf(params) as never } })
      .then(({ data, error, response }) => {
        suggestions.value = data !== undefined ? commandSuggestions(data.items, query) : { failure: problemText(error, response.status) };
      })
      .catch(() => (suggestions.value = { failure: problemText(undefined) }));
  }, [key]);
  return suggestions.value;
}

/** The create body of a COMMAND rollout of the plan on the devices `targets` (a search's query string) selects. */
function bodyOf(targets: string, plan: CommandPlan): components['schemas']['RolloutCreateBody'] {
  const { command, arguments: args, expiresInSeconds } = plan.command;
  return {
    action: 'COMMAND',
    command: { command, expiresInSeconds, ...(args === null ? {} : { arguments: args }) },
    targets: { query: targets },
    ...(plan.waves === undefined ? {} : { waves: plan.waves }),
    ...(plan.failureThreshold === undefined ? {} : { failureThreshold: plan.failureThreshold }),
    ...(plan.note === undefined ? {} : { note: plan.note }),
  };
}

/**
 * The preview of the COMMAND rollout (`POST …/rollouts/preview`: what it would do, nothing written), or, with
 * `start`, its creation, which then shows the rollout's page. Answers the preview, that it started, or the service's
 * refusal.
 */
export async function startCommandRollout(
  company: string,
  targets: string,
  plan: CommandPlan,
  start: boolean,
): Promise<{ preview: RolloutPreview } | { started: string } | { refusal: Refusal }> {
  const params = { path: { companyId: company } };
  const body = bodyOf(targets, plan);
  try {
    if (!start) {
      const { data, error, response } = await api.main.POST('/companies/{companyId}/resources/rollouts/preview', { params, body });
      return data === undefined ? { refusal: refusalOf(error, response.status) } : { preview: data };
    }
    const { data, error, response } = await api.main.POST('/companies/{companyId}/resources/rollouts', { params, body });
    if (data === undefined) return { refusal: refusalOf(error, response.status) };
    navigate(`/rollouts/${encodeURIComponent(company)}/${encodeURIComponent(data.id)}`);
    return { started: data.id };
  } catch {
    return { refusal: refusalOf(undefined) };
  }
}

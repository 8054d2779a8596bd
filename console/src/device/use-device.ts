/**
 * The device page's state: the four reads (device, active deployments, history, the company's scenario versions),
 * "Show more history", and deploy/undeploy followed by reading the deployments and history again.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Device } from './facts.js';
import {
  type ActionOutcome,
  type ActiveDeployment,
  deployOne,
  type HistoryEntry,
  type Loaded,
  loadActive,
  loadDevice,
  loadHistory,
  loadScenarioVersions,
  type ScenarioVersion,
} from './load.js';

/** How many times the history is read again, a second apart, until an action's entry shows in it. */
const HISTORY_CATCH_UP_ATTEMPTS = 5;

/** The device's history as shown so far: the pages loaded, and the cursor of the next one (null on the last page). */
export interface HistoryState {
  items: HistoryEntry[];
  nextCursor: string | null;
}

/** A state setter, as useState gives it (called with the new value only). */
type Setter<T> = (value: T) => void;

/** What a deploy or undeploy ended with: the result item's outcome (to announce), or an error message (an alert). */
export type ActResult = { outcome?: ActionOutcome; error?: string };

/** Whether the component is still shown (a ref): answers arriving after the page is left are dropped. */
function useMounted(): { readonly current: boolean } {
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  return mounted;
}

/** The four reads, each null until its answer is in; they go out together and each part shows as soon as it is in. */
function useReads(company: string, deviceId: string, mayDeploy: boolean) {
  const [device, setDevice] = useState<Loaded<Device> | null>(null);
  const [active, setActive] = useState<Loaded<ActiveDeployment[]> | null>(null);
  const [history, setHistory] = useState<Loaded<HistoryState> | null>(null);
  const [versions, setVersions] = useState<Loaded<ScenarioVersion[]> | null>(null);
  useEffect(() => {
    let current = true;
    void loadDevice(company, deviceId).then((loaded) => current && setDevice(loaded));
    void loadActive(company, deviceId).then((loaded) => current && setActive(loaded));
    void loadHistory(company, deviceId).then((loaded) => current && setHistory(loaded));
    if (mayDeploy) void loadScenarioVersions(company).then((loaded) => current && setVersions(loaded));
    return () => {
      current = false;
    };
  }, [company, deviceId, mayDeploy]);
  return { device, active, setActive, history, setHistory, versions };
}

/** "Show more history": appends the next page to `history`, or keeps the message of a failed read. */
function useMoreHistory(
  company: string,
  deviceId: string,
  history: Loaded<HistoryState> | null,
  setHistory: Setter<Loaded<HistoryState> | null>,
) {
  const [moreError, setMoreError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const showMore = async () => {
    if (history === null || !history.ok || history.data.nextCursor === null) return;
    setLoadingMore(true);
    setMoreError(null);
    const next = await loadHistory(company, deviceId, history.data.nextCursor);
    setLoadingMore(false);
    if (!next.ok) {
      setMoreError(next.message);
      return;
    }
    setHistory({ ok: true, data: { items: [...history.data.items, ...next.data.items], nextCursor: next.data.nextCursor } });
  };
  return { moreError, setMoreError, loadingMore, showMore };
}

/**
 * Deploy and undeploy (`act`), then the active deployments and the first page of history read again. The history is
 * derived from the deployments' change stream, a moment after the action: while the action's entry is not in it
 * yet, the first page is read again, a second apart, a few times at most.
 */
function useAct(
  company: string,
  deviceId: string,
  setActive: Setter<Loaded<ActiveDeployment[]> | null>,
  setHistory: Setter<Loaded<HistoryState> | null>,
  setMoreError: Setter<string | null>,
) {
  const mounted = useMounted();

  /** Reads the history's first page again until it holds `actionId`. */
  const catchUp = async (actionId: string | undefined, read: Loaded<HistoryState>) => {
    let latest = read;
    for (let attempt = 0; attempt < HISTORY_CATCH_UP_ATTEMPTS; attempt += 1) {
      if (actionId === undefined || !latest.ok || latest.data.items.some((entry) => entry.id === actionId)) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (!mounted.current) return;
      latest = await loadHistory(company, deviceId);
      if (!mounted.current) return;
      setHistory(latest);
    }
  };

  const refreshDeployments = async (actionId?: string) => {
    const [nextActive, nextHistory] = await Promise.all([loadActive(company, deviceId), loadHistory(company, deviceId)]);
    if (!mounted.current) return;
    setActive(nextActive);
    setHistory(nextHistory);
    setMoreError(null);
    void catchUp(actionId, nextHistory);
  };

  return async (action: 'DEPLOY' | 'UNDEPLOY', target: ScenarioVersion): Promise<ActResult> => {
    const result = await deployOne(company, deviceId, action, target);
    await refreshDeployments(result.ok ? result.data.id : undefined);
    return result.ok ? { outcome: result.data } : { error: result.message };
  };
}

/**
 * The whole state of one device's page: the reads (null until in), the history's "Show more" (`showMore`,
 * `loadingMore`, `moreError`) and `act` (deploy or undeploy a version, then read the deployments again).
 */
export function useDevicePage(company: string, deviceId: string, mayDeploy: boolean) {
  const reads = useReads(company, deviceId, mayDeploy);
  const more = useMoreHistory(company, deviceId, reads.history, reads.setHistory);
  const act = useAct(company, deviceId, reads.setActive, reads.setHistory, more.setMoreError);
  const { device, active, history, versions } = reads;
  const { moreError, loadingMore, showMore } = more;
  return { device, active, history, versions, moreError, loadingMore, showMore, act };
}

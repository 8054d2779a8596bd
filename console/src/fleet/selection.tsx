/**
 * The fleet page's selection of devices for a deployment: chosen rows (kept across pages and searches), or
 * explicitly every device matching the current search; and the deploy flow opened for it. While the flow is open
 * the selection is fixed (its controls are disabled), and each opening mounts a new flow, so the flow always deploys
 * to the selection the page shows.
 */
import { useSignal } from '@preact/signals';
import type { DeploySelection, DeviceRef } from '../deploy/selection.js';
import { count } from '../format.js';
import type { DeviceResource } from './search-query.js';

/** The selection as the page shows and changes it. */
export interface Selection {
  /** The chosen rows, by `company/id` (empty when every match is selected). */
  selected: ReadonlyMap<string, DeviceRef>;
  /** The total of "every device matching the search", when that is what is selected; else null. */
  matching: number | null;
  /** How many devices are selected. */
  size: number;
  /** Whether the row of `device` is selected. */
  has(device: DeviceResource): boolean;
  /** Adds (`on`) or removes devices (after "every match", starts from no device). */
  select(devices: readonly DeviceResource[], on: boolean): void;
  /** Selects every device matching the search, `total` of them. */
  selectMatching(total: number): void;
  clear(): void;
  /** What the deploy flow takes. */
  toDeploy(): DeploySelection;
}

/** A device's key in the selection. */
function keyOf(device: DeviceRef): string {
  return `${device.company}/${device.id}`;
}

/**
 * The selection. `selectionKey` is the search's filters and full text (selectionParamsOf): "every match" stands for
 * the search it was chosen on only, so it lapses when the search changes.
 */
export function useSelection(selectionKey: string): Selection {
  const selected = useSignal<ReadonlyMap<string, DeviceRef>>(new Map());
  const matching = useSignal<{ key: string; total: number } | null>(null);
  const matchingNow = matching.value !== null && matching.value.key === selectionKey ? matching.value.total : null;
  return {
    selected: selected.value,
    matching: matchingNow,
    size: matchingNow ?? selected.value.size,
    has: (device) => matchingNow !== null || selected.value.has(keyOf(device)),
    select: (devices, on) => {
      const next = new Map(matchingNow === null ? selected.value : []);
      for (const device of devices) {
        if (on) next.set(keyOf(device), { company: device.company, id: device.id });
        else next.delete(keyOf(device));
      }
      matching.value = null;
      selected.value = next;
    },
    selectMatching: (total) => {
      selected.value = new Map();
      matching.value = { key: selectionKey, total };
    },
    clear: () => {
      matching.value = null;
      selected.value = new Map();
    },
    toDeploy: () =>
      matchingNow !== null
        ? { kind: 'matching', query: new URLSearchParams(selectionKey), total: matchingNow }
        : { kind: 'devices', devices: [...selected.value.values()] },
  };
}

/** The deploy flow: closed, or open (see `open`). */
export interface DeployFlow {
  /**
   * The open flow: its selection, which opening it is (its key: each opening starts afresh), and the element that had
   * the focus when it opened (read before the page disables it), to which closing returns the focus.
   */
  open: { selection: DeploySelection; opening: number; opener: Element | null } | null;
  start(selection: DeploySelection): void;
  close(): void;
}

/** The deploy flow's state: closed, or open for one selection. */
export function useDeployFlow(): DeployFlow {
  const open = useSignal<DeployFlow['open']>(null);
  const openings = useSignal(0);
  return {
    open: open.value,
    start: (selection) => {
      const opener = document.activeElement;
      openings.value += 1;
      open.value = { selection, opening: openings.value, opener };
    },
    close: () => {
      open.value = null;
    },
  };
}

/** The words that say what is selected. */
function selectionText(selection: Selection): string {
  if (selection.size === 0) return 'No device selected.';
  if (selection.matching !== null) return `All ${count(selection.matching)} matching devices are selected.`;
  return `${count(selection.size)} ${selection.size === 1 ? 'device' : 'devices'} selected.`;
}

/** What the selection bar acts on. */
export interface SelectionBarProps {
  selection: Selection;
  /** The devices on the page. */
  shown: readonly DeviceResource[];
  /** The search's total, or undefined when there is none to select (no answer yet, or the search failed). */
  total: number | undefined;
  /** Full text is searched: "every match" is not offered (it also finds scenarios). */
  fullText: boolean;
  /** The deploy flow is open: the selection is fixed. */
  locked: boolean;
  onDeploy(): void;
}

/** The selection's controls and status: select the page or every match, clear, deploy. */
export function SelectionBar({ selection, shown, total, fullText, locked, onDeploy }: SelectionBarProps) {
  return (
    <div class="toolbar fleet-selection">
      <button type="button" onClick={() => selection.select(shown, true)} disabled={locked || shown.length === 0}>
        Select this page
      </button>
      {fullText ? null : (
        <button
          type="button"
          disabled={locked || total === undefined || total === 0}
          onClick={() => total !== undefined && selection.selectMatching(total)}
        >
          Select all {count(total ?? 0)} matching
        </button>
      )}
      <p role="status" class="fleet-selection-status">
        {selectionText(selection)}
        {locked ? ' Close the deploy to change the selection.' : ''}
      </p>
      {selection.size > 0 ? (
        <>
          <button type="button" onClick={selection.clear} disabled={locked}>
            Clear selection
          </button>
          <button type="button" class="primary" onClick={onDeploy} disabled={locked}>
            Deploy to selection…
          </button>
        </>
      ) : null}
    </div>
  );
}

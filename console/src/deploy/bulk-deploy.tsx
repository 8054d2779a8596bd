/** Deploying one scenario version to a selection of devices, from the fleet page (filled in next). */

/** One device, by company and id. */
export interface DeviceRef {
  company: string;
  id: string;
}

/**
 * What the operator selected on the fleet page: chosen rows (or a page of them), or explicitly every device matching
 * the current search (`query`: the search's query string as the URL holds it; `total`: the count the search gave).
 */
export type DeploySelection = { kind: 'devices'; devices: DeviceRef[] } | { kind: 'matching'; query: URLSearchParams; total: number };

/** The deploy flow for a selection: choose SCENARIO@VERSION, dry run, confirm, progress, summary. */
export function BulkDeploy({ selection, onClose }: { selection: DeploySelection; onClose(): void }) {
  const size = selection.kind === 'devices' ? selection.devices.length : selection.total;
  return (
    <section aria-labelledby="bulk-deploy-title">
      <h2 id="bulk-deploy-title">Deploy to {size} devices</h2>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </section>
  );
}

/**
 * What the deploy flow is given: the devices the operator selected on the fleet page. Its own module, so that the
 * flow, its calls and its steps name these types without importing the component that renders them.
 */

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

import { highestVersion } from '../../core/scenarios/versions.js';
import type { DeviceDocument, DocumentKey, ScenarioDocument, SearchDocument } from '../../core/search/documents.js';

/**
 * Maps a devices/scenarios table item (plain object, already unmarshalled) to its search document, or undefined
 * for items that are not searchable (scenario versions, unknown entities).
 */
export function searchDocumentFromItem(item: Record<string, unknown>): SearchDocument | undefined {
  switch (item.entity) {
    case 'DEVICE': {
      // The credential and the delete mark are never shown (a health report's update carries the whole item).
      const { deviceId: _deviceId, entity: _entity, credential: _credential, deleting: _deleting, ...device } = item;
      return { ...(device as Omit<DeviceDocument, 'type'>), type: 'DEVICE' };
    }
    case 'SCENARIO': {
      const document: ScenarioDocument = {
        type: 'SCENARIO',
        id: item.scenarioId as string,
        company: item.company as string,
        name: item.name as string,
        latestVersion: highestVersion((item.versions as string[] | undefined) ?? []) ?? (item.latestVersion as string),
        versions: (item.versions as string[] | undefined) ?? [],
        created: item.created as string,
        updated: item.updated as string,
      };
      if (typeof item.description === 'string') document.description = item.description;
      return document;
    }
    default:
      return undefined;
  }
}

/** The index key of a table item's document, or undefined for non-searchable items. */
export function documentKeyFromItem(item: Record<string, unknown>): DocumentKey | undefined {
  switch (item.entity) {
    case 'DEVICE':
      return { type: 'DEVICE', company: item.company as string, id: item.deviceId as string };
    case 'SCENARIO':
      return { type: 'SCENARIO', company: item.company as string, id: item.scenarioId as string };
    default:
      return undefined;
  }
}

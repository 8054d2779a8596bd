import { highestVersion } from '../../core/scenarios/versions.js';
import { type DocumentKey, deviceDocumentOf, type ScenarioDocument, type SearchDocument } from '../../core/search/documents.js';
import { DEVICE_ENTITY, deviceFromItem } from './device-items.js';

/**
 * Maps a devices/scenarios table item (plain object, already unmarshalled) to its search document, or undefined
 * for items that are not searchable (scenario versions, unknown entities) or no longer are (a device being deleted:
 * its `deleting` mark takes it out of search at once, before its item is deleted).
 */
export function searchDocumentFromItem(item: Record<string, unknown>): SearchDocument | undefined {
  switch (item.entity) {
    case DEVICE_ENTITY: {
      if (item.deleting === true) return undefined;
      // The device as the API shows it (commands' payload and arguments parsed back from their stored JSON text).
      return deviceDocumentOf(deviceFromItem(item));
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

/**
 * The embedded search index's snapshot over real restarts of the local runtime (`bin/local.ts`): a fresh data folder
 * rebuilds from the tables and then writes a snapshot (periodically, here every second, and at stop); the next start
 * loads it and catches up from the streams with a change made after the snapshot was taken; a damaged snapshot makes
 * the start rebuild from the tables, and search still answers.
 */
import { access, copyFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { DocumentCodec } from '../../functions/adapters/embedded/document-codec.js';
import { readSearchSnapshot, searchSnapshotFile } from '../../functions/local/search-snapshot.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const ENVIRONMENT = { SEARCH_SNAPSHOT_INTERVAL_MS: '1000' };
const SERIAL = 'SN-SNAPSHOT-CATCHUP';

describe('search snapshot across restarts', () => {
  const local = useLocalService({ users: ['alice'], environment: ENVIRONMENT });

  /** Devices whose serial search finds (global full text), as the operator alice sees them. */
  async function found(): Promise<string[]> {
    const answer = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/resources/search', {
        params: { query: { type: ['DEVICE'], global: SERIAL } },
      }),
    );
    return answer.resources.map((resource) => resource.id);
  }

  it('rebuilds at the first start, loads the snapshot and catches up at the next, and rebuilds again when it is damaged', async () => {
    const file = searchSnapshotFile(local.settings.dataDirectory);

    // The first start, on a fresh data folder (useLocalService).
    expect(local.service.output()).toMatch(
      /Search index rebuilt from a parallel scan of the tables \(242 documents\) in .*: no snapshot yet/,
    );
    await eventually(
      () =>
        access(file).then(
          () => true,
          () => false,
        ),
      'a periodic snapshot',
    );
    // The snapshot as a crash right now would leave it: taken before the device below exists.
    await copyFile(file, `${file}.before`);
    const created = await clientFor(local.service, local.tokens.alice).main.PUT('/companies/{companyId}/resources/devices/{deviceId}', {
      params: { path: { companyId: 'acme', deviceId: 'snapshot-kiosk' } },
      body: { serial: SERIAL },
    });
    expect(created.response.status).toBe(201);
    await eventually(async () => (await found()).includes('snapshot-kiosk'), 'the new device searchable');
    await local.service.stop();
    // Written periodically or at stop: covers the device either way.
    const written = await readSearchSnapshot(file);
    const codec = DocumentCodec.withTable(written?.header.strings ?? []);
    expect(written?.documents.some((bytes) => codec.decode(bytes).id === 'snapshot-kiosk')).toBe(true);

    await copyFile(`${file}.before`, file);
    await local.restart();
    expect(local.service.output()).toMatch(/Search index loaded from the snapshot of .* \(242 documents, with their full text\)/);
    expect(local.service.output()).toContain('242 documents indexed from the search snapshot');
    await eventually(async () => (await found()).includes('snapshot-kiosk'), 'the device written after the snapshot, caught up');
    await local.service.stop();

    await writeFile(file, '{"format":"device-scenario-service/search-snapshot","version":1,"created":');
    await local.restart();
    expect(local.service.output()).toMatch(
      /Search index rebuilt from a parallel scan of the tables \(243 documents\) in .*: .*its first line is not JSON/,
    );
    expect(await found()).toEqual(['snapshot-kiosk']);
  }, 240_000);
});

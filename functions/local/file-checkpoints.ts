import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StreamCheckpoints } from './stream-poller.js';

/**
 * StreamCheckpoints in a JSON file (`{ "<streamArn>|<shardId>": "<sequence number>" }`), replaced atomically (written
 * and flushed to a temporary file, then renamed), so a process killed at any moment leaves the previous or the new
 * positions. A file that cannot be read as positions (damaged by hand, a full disk) counts as none, reported through
 * `onUnreadable`: the stream is then read from its oldest record, which an idempotent consumer can afford.
 */
export class FileStreamCheckpoints implements StreamCheckpoints {
  constructor(
    private readonly file: string,
    private readonly onUnreadable: (error: Error) => void = () => undefined,
  ) {}

  /** @inheritdoc */
  async load(): Promise<Map<string, string>> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw error;
    }
    try {
      const saved = JSON.parse(text) as unknown;
      if (saved === null || typeof saved !== 'object' || Array.isArray(saved)) throw new Error('not a JSON object');
      return new Map(Object.entries(saved).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    } catch (error) {
      this.onUnreadable(
        new Error(
          `Stream positions in ${this.file} are unreadable (${(error as Error).message}); reading the streams from their oldest records.`,
        ),
      );
      return new Map();
    }
  }

  /** @inheritdoc */
  async save(positions: ReadonlyMap<string, string>): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(Object.fromEntries(positions))}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, this.file);
  }
}

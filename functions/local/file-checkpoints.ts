import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StreamCheckpoints } from './stream-poller.js';

/**
 * StreamCheckpoints in a JSON file (`{ "<streamArn>|<shardId>": "<sequence number>" }`), replaced atomically (write
 * to a temporary file, then rename), so a process killed at any moment leaves the previous or the new positions.
 */
export class FileStreamCheckpoints implements StreamCheckpoints {
  constructor(private readonly file: string) {}

  /** @inheritdoc */
  async load(): Promise<Map<string, string>> {
    try {
      const saved = JSON.parse(await readFile(this.file, 'utf8')) as Record<string, unknown>;
      return new Map(Object.entries(saved).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw error;
    }
  }

  /** @inheritdoc */
  async save(positions: ReadonlyMap<string, string>): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(Object.fromEntries(positions))}\n`);
    await rename(temporary, this.file);
  }
}

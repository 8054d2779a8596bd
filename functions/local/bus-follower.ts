/**
 * The local stand-in of an EventBridge rule feeding an SQS queue (BusEventsTrigger): a follower of the local bus's
 * file (`.data/events/events.jsonl`, one event per line, LocalEventBus) that hands the events of the trigger's detail
 * types to the handler as SQS events whose bodies are EventBridge envelopes, as the queue does on AWS, from the
 * events published after it first started. Durable: it
 * keeps the byte offset after the last line its handler accepted in a checkpoint file (replaced atomically), so a
 * restart or a crash at any moment resumes there and at worst hands a batch again, which the consumers' idempotent
 * writes make harmless.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { EVENT_SOURCE } from '../adapters/aws/eventbridge-event-publisher.js';

/** How often the file is read for new lines, ms (the bus appends each event as it is published). */
export const BUS_FOLLOW_INTERVAL_MS = 100;

/** The most of the file read at once, bytes. */
const READ_CHUNK_BYTES = 1024 * 1024;

/** The wait before a batch the handler failed is handed again, ms. */
const REDELIVERY_DELAY_MS = 1_000;

/** What the follower reads, and whom it hands events to. */
export interface BusFollowerOptions {
  /** The local bus's file. */
  eventsFile: string;
  /** Where the offset after the last handled line is kept. */
  checkpointFile: string;
  /** The EventBridge detail types (bus event `type`s) handed on; the other lines are skipped. */
  detailTypes: readonly string[];
  /** SQS messages per handler call. */
  batchSize: number;
  /** The queue's name in the records' ARN. */
  queue: string;
  region: string;
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;
  onError: (error: Error) => void;
  /** @default BUS_FOLLOW_INTERVAL_MS */
  intervalMs?: number;
}

/** One complete line of the file: the event it holds (undefined for a torn or foreign line) and the offset after it. */
interface Line {
  event: { type?: unknown; at?: unknown } | undefined;
  end: number;
}

/** The EventBridge envelope of a bus event, as a rule's SQS target receives it (`detail` = the event). */
export function eventBridgeEnvelope(event: { type: string; at?: unknown }, id: string, region: string): string {
  const time = typeof event.at === 'string' ? event.at : new Date().toISOString();
  return JSON.stringify({
    version: '0',
    id,
    'detail-type': event.type,
    source: EVENT_SOURCE,
    account: '000000000000',
    time,
    region,
    resources: [],
    detail: event,
  });
}

/** Follows the bus file: see the module comment. */
export class LocalBusFollower {
  private offset = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private retryAt = 0;

  constructor(private readonly options: BusFollowerOptions) {}

  /**
   * Loads the checkpoint and starts following. Without one (a new data folder, or a folder older than this consumer)
   * it starts at the file's current end and saves that, as a new EventBridge rule receives only the events published
   * after it exists: a folder's past events are not fanned out. An unreadable checkpoint counts as the file's start.
   */
  async start(): Promise<void> {
    const saved = await this.loadOffset();
    if (saved === undefined) {
      this.offset = await this.fileSize();
      await this.saveOffset();
    } else this.offset = saved;
    this.timer = setInterval(() => {
      this.running ??= this.step()
        .catch((error: unknown) => this.options.onError(error as Error))
        .finally(() => {
          this.running = undefined;
        });
    }, this.options.intervalMs ?? BUS_FOLLOW_INTERVAL_MS);
  }

  /** Stops following, after the batch in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Hands the complete lines after the offset to the handler, batch by batch, saving the offset after each. */
  private async step(): Promise<void> {
    if (Date.now() < this.retryAt) return;
    const lines = await this.readLines();
    for (let start = 0; start < lines.length && !this.stopped; ) {
      const batch: { record: SQSRecord; end: number }[] = [];
      let end = this.offset;
      for (; start < lines.length && batch.length < this.options.batchSize; start += 1) {
        const line = lines[start] as Line;
        end = line.end;
        const type = line.event?.type;
        if (typeof type === 'string' && this.options.detailTypes.includes(type)) {
          batch.push({ record: this.record(line.event as { type: string }, line.end), end: line.end });
        }
      }
      if (batch.length > 0 && !(await this.deliver(batch.map((entry) => entry.record)))) return;
      this.offset = end;
      await this.saveOffset();
    }
  }

  /** Hands one batch to the handler. @returns false when it failed any message (the batch is handed again later). */
  private async deliver(records: SQSRecord[]): Promise<boolean> {
    try {
      const response = await this.options.handler({ Records: records });
      if ((response?.batchItemFailures.length ?? 0) === 0) return true;
      this.options.onError(new Error(`${response?.batchItemFailures.length} of ${records.length} bus events failed; handing them again`));
    } catch (error) {
      this.options.onError(error as Error);
    }
    this.retryAt = Date.now() + REDELIVERY_DELAY_MS;
    return false;
  }

  /** The complete lines after the offset (at most READ_CHUNK_BYTES of them), parsed. */
  private async readLines(): Promise<Line[]> {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(this.options.eventsFile, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    try {
      // A file shorter than the offset was replaced (the data folder reset): follow the new one from its start.
      if ((await handle.stat()).size < this.offset) this.offset = 0;
      const buffer = Buffer.alloc(READ_CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK_BYTES, this.offset);
      const lines: Line[] = [];
      let from = 0;
      for (let newline = buffer.indexOf(10, 0); newline !== -1 && newline < bytesRead; newline = buffer.indexOf(10, from)) {
        lines.push({ event: parseLine(buffer.subarray(from, newline).toString('utf8')), end: this.offset + newline + 1 });
        from = newline + 1;
      }
      return lines;
    } finally {
      await handle.close();
    }
  }

  /** The SQS record of the event ending at `end`: its message id derived from the line's offset and text. */
  private record(event: { type: string; at?: unknown }, end: number): SQSRecord {
    const id = createHash('sha256')
      .update(`${end}:${JSON.stringify(event)}`)
      .digest('hex')
      .slice(0, 32);
    const body = eventBridgeEnvelope(event, id, this.options.region);
    const now = String(Date.now());
    return {
      messageId: id,
      receiptHandle: id,
      body,
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: now, SenderId: 'local', ApproximateFirstReceiveTimestamp: now },
      messageAttributes: {},
      md5OfBody: createHash('md5').update(body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:${this.options.region}:000000000000:${this.options.queue}`,
      awsRegion: this.options.region,
    };
  }

  /** The saved offset: undefined without a checkpoint file, 0 for one that cannot be read as an offset. */
  private async loadOffset(): Promise<number | undefined> {
    let text: string;
    try {
      text = await readFile(this.options.checkpointFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const saved = JSON.parse(text) as { offset?: unknown };
      return typeof saved.offset === 'number' && Number.isSafeInteger(saved.offset) && saved.offset >= 0 ? saved.offset : 0;
    } catch {
      return 0;
    }
  }

  /** The bus file's size, bytes (0 while it does not exist). */
  private async fileSize(): Promise<number> {
    try {
      return (await stat(this.options.eventsFile)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
  }

  private async saveOffset(): Promise<void> {
    const file = this.options.checkpointFile;
    await mkdir(dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(`${JSON.stringify({ offset: this.offset })}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  }
}

/** The event a line holds, or undefined for a line that is no JSON object (a line torn by a crash mid-append). */
function parseLine(text: string): Line['event'] {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Line['event']) : undefined;
  } catch {
    return undefined;
  }
}

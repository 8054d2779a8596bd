/** An in-memory CommandRepository for unit tests: the conditions the DynamoDB adapter's writes carry, on a Map. */

import type { Command } from '../../functions/core/commands/model.js';
import { isPending } from '../../functions/core/commands/model.js';
import type {
  CommandRepository,
  CommandStateChange,
  CommandTransition,
  CommandWriteOutcome,
  OverdueCommand,
} from '../../functions/core/commands/ports.js';
import type { Page } from '../../functions/core/shared/paging.js';

/** A CommandRepository on a Map keyed `{company}#{deviceId}#{commandId}`; `items` is open for assertions. */
export class InMemoryCommands implements CommandRepository {
  readonly items = new Map<string, Command>();
  /** Every transition asked for, in order. */
  readonly transitions: { commandId: string; to: string }[] = [];

  private key(company: string, deviceId: string, commandId: string): string {
    return `${company}#${deviceId}#${commandId}`;
  }

  async create(command: Command): Promise<void> {
    const key = this.key(command.company, command.deviceId, command.id);
    if (this.items.has(key)) throw new Error(`Command ${command.id} exists`);
    this.items.set(key, structuredClone(command));
  }

  async createEach(commands: readonly Command[]): Promise<CommandWriteOutcome[]> {
    return commands.map((command) => {
      const key = this.key(command.company, command.deviceId, command.id);
      if (this.items.has(key)) return 'exists';
      this.items.set(key, structuredClone(command));
      return 'created';
    });
  }

  async getMany(company: string, keys: readonly { deviceId: string; commandId: string }[]): Promise<Command[]> {
    return keys.flatMap(({ deviceId, commandId }) => {
      const found = this.items.get(this.key(company, deviceId, commandId));
      return found === undefined ? [] : [structuredClone(found)];
    });
  }

  async get(company: string, deviceId: string, commandId: string): Promise<Command | undefined> {
    const found = this.items.get(this.key(company, deviceId, commandId));
    return found === undefined ? undefined : structuredClone(found);
  }

  private ofDevice(company: string, deviceId: string): Command[] {
    return [...this.items.values()]
      .filter((command) => command.company === company && command.deviceId === deviceId)
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async list(company: string, deviceId: string, limit: number, cursor: string | undefined): Promise<Page<Command>> {
    const all = this.ofDevice(company, deviceId).reverse();
    const start = cursor === undefined ? 0 : all.findIndex((command) => command.id < cursor);
    const items = start < 0 ? [] : all.slice(start, start + limit);
    const more = start >= 0 && start + limit < all.length;
    return { items: structuredClone(items), nextCursor: more ? (items.at(-1)?.id ?? null) : null };
  }

  async pending(company: string, deviceId: string): Promise<Command[]> {
    return structuredClone(this.ofDevice(company, deviceId).filter((command) => isPending(command.state)));
  }

  async transition(company: string, deviceId: string, commandId: string, change: CommandStateChange): Promise<CommandTransition> {
    this.transitions.push({ commandId, to: change.to });
    const command = this.items.get(this.key(company, deviceId, commandId));
    if (command === undefined) return { outcome: 'absent' };
    const allowed =
      change.from.includes(command.state) &&
      (change.notExpiredAt === undefined || command.expiresAt > change.notExpiredAt) &&
      (change.expiredAt === undefined || command.expiresAt <= change.expiredAt);
    if (!allowed) return { outcome: 'final', command: structuredClone(command) };
    command.state = change.to;
    command.updated = change.at;
    if (change.result !== undefined) command.result = structuredClone(change.result);
    return { outcome: 'changed', command: structuredClone(command) };
  }

  async overdue(now: string, limit: number): Promise<OverdueCommand[]> {
    return [...this.items.values()]
      .filter((command) => isPending(command.state) && command.expiresAt <= now)
      .slice(0, limit)
      .map((command) => ({ company: command.company, deviceId: command.deviceId, commandId: command.id, expiresAt: command.expiresAt }));
  }
}

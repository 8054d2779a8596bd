/**
 * The command rollout composer's preview, from the service's (`POST …/rollouts/preview`): how many of the targets advertise the command
 * (each gets it, on every sub-device that advertises it), how many do not (each will be a FAILURE with cause
 * COMMAND_NOT_ADVERTISED), the commands by sub-device type, and the waves. Its heading takes the focus when a preview
 * arrives; once the form changes, it says the preview is of the form as it was.
 */
import { useEffect, useRef } from 'preact/hooks';
import { words } from '../device/facts.js';
import { count } from '../format.js';
import { UserText } from '../user-text.js';
import type { CommandPreviewAnswer } from './command-api.js';

/** `n device(s)`. */
const devices = (n: number) => `${count(n)} ${n === 1 ? 'device' : 'devices'}`;

/** The waves in words: `Wave 1: 2, wave 2: 3`. */
function wavesText(waves: readonly number[]): string {
  return waves.map((size, index) => `${index === 0 ? 'Wave' : 'wave'} ${index + 1}: ${count(size)}`).join(', ');
}

/** The commands by sub-device type (`capability.type`), the most first. */
function ByType({ byType }: { byType: Record<string, number> }) {
  const rows = Object.entries(byType).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  if (rows.length === 0) return null;
  return (
    <table class="command-preview-types">
      <caption>Commands by sub-device type</caption>
      <thead>
        <tr>
          <th scope="col">Sub-device type</th>
          <th scope="col">Commands</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([type, commands]) => (
          <tr key={type} data-type={type}>
            <td>
              <UserText text={words(type)} />
            </td>
            <td class="number">{count(commands)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The preview (see the module comment); `current` is false once the form changed since it was read. */
export function CommandPreviewView(props: { preview: CommandPreviewAnswer; total: number; command: string; current: boolean }) {
  const { preview, command, current } = props;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [preview]);
  const figures = preview.command;
  return (
    <section class="compose-preview" aria-labelledby="command-preview-title">
      <h3 id="command-preview-title" tabIndex={-1} ref={heading}>
        Preview
      </h3>
      {current ? null : <p class="notice">The form changed since this preview: preview it again before starting.</p>}
      {figures === undefined ? null : (
        <>
          <p class="command-preview-advertising">
            {count(figures.advertising)} of {devices(preview.targets)} advertise <UserText text={command} />: each gets it,{' '}
            {count(figures.commands)} {figures.commands === 1 ? 'command' : 'commands'} in all (one per sub-device that advertises it).
          </p>
          {figures.notAdvertising === 0 ? null : (
            <p class="command-preview-missing">
              {devices(figures.notAdvertising)} {figures.notAdvertising === 1 ? 'advertises' : 'advertise'} it nowhere: each will fail with
              the cause Command not advertised.
            </p>
          )}
          {figures.notFound === 0 ? null : (
            <p>
              {devices(figures.notFound)} {figures.notFound === 1 ? 'does' : 'do'} not exist: each will fail with the cause Target not
              found.
            </p>
          )}
          <ByType byType={figures.bySubDeviceType} />
        </>
      )}
      <p class="command-preview-waves">{wavesText(preview.waves)}</p>
    </section>
  );
}

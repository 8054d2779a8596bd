/**
 * Text that a device or a user wrote (ids, serials, names, labels, messages, notes, emails), as every page shows it:
 * isolated in a `<bdi>` (`unicode-bidi: isolate`, Unicode UAX #9), so that a right-to-left text cannot reorder the
 * words around it; its hidden characters (bidirectional controls, the "Trojan Source" characters of CVE-2021-42574,
 * and control characters) shown as marks naming them (visible-text.ts), so that "\u202Egnp.exe\u202C" reads
 * "<U+202E>gnp.exe<U+202C>" and never "exe.png"; wrapping anywhere (main.css, `.user-text`), so that no length
 * widens the page. Always rendered as text, never as HTML. Where no element can go, use visibleText.
 */
import { piecesOf, visibleText } from './visible-text.js';

export { visibleText };

/**
 * A text from a device or a user (see the module comment). With `truncate`, it keeps to one line, cut with an
 * ellipsis where its room ends, its whole text in its title (for the fleet's columns of ids and serials, whose pages
 * show them in full).
 */
export function UserText({ text, truncate = false }: { text: string; truncate?: boolean }) {
  const pieces = piecesOf(text);
  return (
    <bdi class={truncate ? 'user-text user-text-truncated' : 'user-text'} title={truncate ? visibleText(text) : undefined}>
      {pieces.map((piece, index) =>
        'text' in piece ? (
          piece.text
        ) : (
          // The pieces of a text never move: the index is a stable key.
          <span key={index} class="hidden-character" title={piece.name}>
            {piece.mark}
          </span>
        ),
      )}
    </bdi>
  );
}

/** Offering text the console made (a CSV export) as a file download. */

/** Offers `csv` as a download named `name`, through a Blob object URL and a link's click. */
export function download(csv: string, name: string): void {
  const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the click; the URL is released once the browser has had a turn to read it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

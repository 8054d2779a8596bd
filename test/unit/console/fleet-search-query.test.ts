/**
 * The fleet page's search helpers (console/src/fleet/search-query.ts): what it sends for the URL's query, the commands
 * it copies; and the console's CSV cells (console/src/csv.ts), quoted per RFC 4180 and never starting a spreadsheet
 * formula.
 */
import { describe, expect, it } from 'vitest';
import { csvCell, csvText } from '../../../console/src/csv.js';
import {
  cliCommand,
  curlCommand,
  effectiveSort,
  filtersParamsOf,
  recordOf,
  searchParamsOf,
  selectionParamsOf,
} from '../../../console/src/fleet/search-query.js';

const query = (text: string) => new URLSearchParams(text);

describe('the fleet search query', () => {
  it('sends the URL query as it is, with type=DEVICE in place of any type', () => {
    expect(searchParamsOf(query('connection.state=CONNECTED&type=SCENARIO&page=2')).toString()).toBe(
      'connection.state=CONNECTED&page=2&type=DEVICE',
    );
  });

  it('asks the filters for the filter parameters only (no full text, sort or paging)', () => {
    expect(filtersParamsOf(query('global=lyon&health.mode=SERVER&sort=id&direction=ASC&page=2&pageSize=50')).toString()).toBe(
      'health.mode=SERVER&type=DEVICE',
    );
  });

  it('gives repeated filters as arrays to the typed client, the others as single values', () => {
    expect(recordOf(query('connection.state=CONNECTED&connection.state=UNKNOWN&page=2&type=DEVICE'))).toEqual({
      'connection.state': ['CONNECTED', 'UNKNOWN'],
      page: '2',
      type: ['DEVICE'],
    });
  });

  it('selects every match by the filters and text, without sort or paging', () => {
    expect(selectionParamsOf(query('company=acme&sort=id&direction=DESC&page=3&pageSize=50')).toString()).toBe('company=acme&type=DEVICE');
  });

  it("knows the API's default sorts", () => {
    expect(effectiveSort(query(''))).toEqual({ field: 'serial', direction: 'ASC' });
    expect(effectiveSort(query('global=lyon'))).toEqual({ field: 'relevance', direction: 'DESC' });
    expect(effectiveSort(query('global=lyon&sort=id'))).toEqual({ field: 'id', direction: 'ASC' });
    expect(effectiveSort(query('direction=DESC'))).toEqual({ field: 'serial', direction: 'DESC' });
  });
});

describe('the copied commands', () => {
  it('writes the search as dss search options, shell-quoted', () => {
    expect(
      cliCommand(
        query("health.mode=SERVER&health.mode=EMBEDDED_PLATFORM_ANDROID&global=l'Acme Lyon&sort=updated&direction=DESC&pageSize=50&page=2"),
      ),
    ).toBe(
      "dss search health.mode=SERVER health.mode=EMBEDDED_PLATFORM_ANDROID --type DEVICE --global 'l'\\''Acme Lyon' --sort updated:desc --limit 50 --page 2",
    );
  });

  it('names the default serial sort for a direction alone, and says what the CLI cannot express', () => {
    expect(cliCommand(query('direction=DESC'))).toBe('dss search --type DEVICE --sort serial:desc');
    expect(cliCommand(query('global=lyon&direction=ASC'))).toBe(
      'dss search --type DEVICE --global lyon  # no dss search option for: direction=ASC (the relevance sort has no --sort name)',
    );
  });

  it('writes curl with the query URL-encoded inside single quotes', () => {
    expect(curlCommand('http://127.0.0.1:3000', query("global=it's"))).toBe(
      `curl -H "Authorization: Bearer $TOKEN" 'http://127.0.0.1:3000/resources/search?global=it%27s&type=DEVICE'`,
    );
  });
});

describe('the CSV export', () => {
  it('quotes every cell and doubles quotes (RFC 4180), records ended by CRLF', () => {
    expect(
      csvText([
        ['ID', 'Location'],
        ['k-1', 'Quai "des Belges", Marseille'],
      ]),
    ).toBe('"ID","Location"\r\n"k-1","Quai ""des Belges"", Marseille"\r\n');
  });

  it('prefixes cells that a spreadsheet would run as a formula with an apostrophe', () => {
    for (const start of ['=', '+', '-', '@']) expect(csvCell(`${start}HYPERLINK("x")`)).toBe(`"'${start}HYPERLINK(""x"")"`);
    expect(csvCell('2025-12-31T23:57:03.000Z')).toBe('"2025-12-31T23:57:03.000Z"');
  });
});

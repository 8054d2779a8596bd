/** The quota's fields of the company forms: an amount and its unit, in one group. */
import { QUOTA_UNITS, type QuotaUnit } from './quota.js';

/**
 * A fieldset "Storage quota" with an "Amount" number field and a "Unit" select, named `quotaAmount` and `quotaUnit`
 * in the form's data (quotaBytesOf reads them back as bytes). Uncontrolled: `amount` and `unit` are where they start.
 */
export function QuotaFields({ amount = '', unit = 'GB' }: { amount?: string; unit?: QuotaUnit }) {
  return (
    <fieldset class="admin-quota">
      <legend>Storage quota (up to 1 TB)</legend>
      <label>
        Amount
        <input name="quotaAmount" type="number" min={0} step="any" required defaultValue={amount} />
      </label>
      <label>
        Unit
        <select name="quotaUnit">
          {QUOTA_UNITS.map((candidate) => (
            // defaultSelected (the `selected` attribute), not `selected`: a form reset then returns to it. Preact sets
            // it as the DOM property; its JSX types do not name it, hence the spread.
            <option key={candidate.unit} value={candidate.unit} {...{ defaultSelected: candidate.unit === unit }}>
              {candidate.unit}
            </option>
          ))}
        </select>
      </label>
    </fieldset>
  );
}

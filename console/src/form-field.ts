/** A form's text field by `name`, trimmed; '' when the form has none. */
export function formField(form: FormData, name: string): string {
  return String(form.get(name) ?? '').trim();
}

// Small string helpers shared by the enrichment steps: length caps that never split a character.

/** `text` cut to at most `max` UTF-16 code units, never leaving half of a surrogate pair at the end. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

// C0 controls, DEL and C1 controls: invisible in reports and awkward in CSV exports.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;

/** `text` without control characters. */
export function stripControlChars(text: string): string {
  return text.replace(CONTROL_CHARS, '');
}

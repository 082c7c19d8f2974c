// Files the page hands to the viewer: CSV text from rows, and a download of text or bytes made in the browser.

/** A CSV field: quoted when needed; a leading = + - @ gets a ' so a spreadsheet never runs it as a formula. */
function csvField(value) {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** RFC 4180 CSV (CRLF line ends) of `columns` (keys of each row, also the header). */
export function toCsv(columns, rows) {
  return [columns, ...rows.map((r) => columns.map((c) => r[c]))].map((line) => line.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** Offers `data` (text or bytes) as a file named `name`. */
export function download(name, data, type) {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A file name part from free text: letters, digits and dashes. */
export const slug = (text) => String(text).normalize('NFKD').replace(/[^\w-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'site';

// The bound on one CSV record of an export (Umami's, Plausible's and Fathom's tables), shared by their parsers: a
// record longer than any export writes refuses the file as soon as the bound is passed, before csv-parse holds more.

import type { CsvError, Options } from 'csv-parse';

/**
 * Characters one record (a line, or several when a quoted field holds line breaks) may have. Every field Plumb keeps
 * is at most a few thousand characters (paths 2,000, Umami's event data 30 properties of 2,300): a longer record
 * is a file of one endless line, whose field csv-parse would otherwise grow until the upload ends.
 */
export const MAX_RECORD_CHARS = 1024 * 1024;

/**
 * csv-parse options for that bound. With `skip_records_with_error`, csv-parse would skip an oversized record yet go
 * on growing it; here it fails the parse with `fail(message)`'s error instead. Other bad records go to `skip` (given
 * `on_skip`, csv-parse emits no `skip` event).
 */
export function boundedRecords(
  file: string,
  fail: (message: string) => Error,
  skip: (err: CsvError) => void,
): Pick<Options, 'max_record_size' | 'on_skip'> {
  return {
    max_record_size: MAX_RECORD_CHARS,
    on_skip: (err) => {
      if (err?.code === 'CSV_MAX_RECORD_SIZE') {
        const line = typeof err.lines === 'number' ? `line ${err.lines} of ${file}` : `a line of ${file}`;
        throw fail(`${line} is longer than ${MAX_RECORD_CHARS.toLocaleString('en')} characters, more than any export's row: not an export; nothing was imported`);
      }
      if (err) skip(err);
      return undefined;
    },
  };
}

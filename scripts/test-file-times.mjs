// A node:test reporter that lists each test file's time, slowest first (PLUMB_TEST_TIMES=path in
// scripts/run-tests.mjs): the sum of the durations of its top-level tests and suites, hooks included; what runs at
// module level (imports, a server started outside a suite) is not in it.

export default async function* fileTimes(source) {
  const seconds = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (nesting !== 0 || typeof file !== 'string') continue;
    seconds.set(file, (seconds.get(file) ?? 0) + (details?.duration_ms ?? 0) / 1000);
  }
  const cwd = `${process.cwd()}/`;
  const rows = [...seconds].map(([file, s]) => [file.startsWith(cwd) ? file.slice(cwd.length) : file, s]).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, s]) => sum + s, 0);
  yield `${rows.length} files, ${total.toFixed(0)} s in all\n`;
  for (const [file, s] of rows) yield `${s.toFixed(1).padStart(7)} s  ${file}\n`;
}

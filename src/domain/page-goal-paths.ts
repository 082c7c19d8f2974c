// A pageview goal's path: an exact path (`/signup`) or a pattern with wildcards (`/blog/*`), checked, and turned
// into the anchored regular expression the report's `matching` filter runs on `pathname`.

/** Long enough for any real path pattern; its regular expression stays under the report's 1,000 characters. */
export const MAX_PAGE_GOAL_PATH = 300;

/**
 * Why `path` cannot be a pageview goal's path, or undefined when it can: it starts with `/`, holds no query or
 * fragment (pathnames are recorded without them) and no control characters.
 */
export function pageGoalPathProblem(path: string): string | undefined {
  if (path.length === 0 || path.length > MAX_PAGE_GOAL_PATH) return `must be 1 to ${MAX_PAGE_GOAL_PATH} characters`;
  if (!path.startsWith('/')) return 'must start with / (a path such as /signup or /blog/*)';
  if (/[?#]/.test(path)) return 'must be a path without ? or #: pathnames are recorded without the query and fragment';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'must not hold control characters';
  return undefined;
}

/**
 * The anchored RE2 expression for `path`: `*` (or `**`, or more in a row) is any run of characters, `/` included;
 * everything else literal, case as written (as pathnames are compared by `is`). Plausible's pageview goals read
 * `*` and `**` so today (`/blog*` groups every blog post), and people switching bring their goals as they are.
 */
export function pageGoalPathRegex(path: string): string {
  const literal = (text: string) => text.replace(/[\\^$.|?*+()[\]{}]/g, (c) => `\\${c}`);
  return `^${path.split(/\*+/).map(literal).join('.*')}$`;
}

/**
 * The same pattern for SQL's LIKE with `\` as its escape character: each run of `*` becomes `%`, and `%`, `_` and
 * `\` are literal. LIKE's `%` also crosses a newline, which the expression's `.` does not: the dialect's
 * pagePathMatch rules a newline out apart.
 */
export function pageGoalPathLike(path: string): string {
  const literal = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
  return path.split(/\*+/).map(literal).join('%');
}

/** Whether `pathname` matches `path` (exact, or a pattern as pageGoalPathRegex reads it), compared in JavaScript. */
export function pageGoalPathMatches(path: string, pathname: string): boolean {
  const parts = path.split(/\*+/);
  if (parts.length === 1) return pathname === path;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (pathname.includes('\n') || pathname.length < first.length + last.length) return false;
  if (!pathname.startsWith(first) || !pathname.endsWith(last)) return false;
  // The parts between stars in order, each at its leftmost place after the one before (leftmost is never worse).
  let at = first.length;
  const end = pathname.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = pathname.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/**
 * Whether some pathname could match both `a` and `b`. Exact for an exact path against anything; two patterns
 * count as overlapping unless their fixed starts or ends rule it out (`/blog/*` and `/docs/*` cannot overlap,
 * `/blog/*` and `*.html` might).
 */
export function pageGoalPathsOverlap(a: string, b: string): boolean {
  if (!a.includes('*')) return pageGoalPathMatches(b, a);
  if (!b.includes('*')) return pageGoalPathMatches(a, b);
  const [aStart, bStart] = [a.slice(0, a.indexOf('*')), b.slice(0, b.indexOf('*'))];
  const [aEnd, bEnd] = [a.slice(a.lastIndexOf('*') + 1), b.slice(b.lastIndexOf('*') + 1)];
  const startsAgree = aStart.startsWith(bStart) || bStart.startsWith(aStart);
  const endsAgree = aEnd.endsWith(bEnd) || bEnd.endsWith(aEnd);
  return startsAgree && endsAgree;
}

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

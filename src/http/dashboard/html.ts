// The HTML the server writes for dashboard pages: one layout, escaped text, and the page's own CSP.

import type { FastifyReply } from 'fastify';
import { PASSWORD_MIN_LENGTH } from '../../domain/passwords.js';

/**
 * Dashboard pages load only their own script, stylesheet and font and talk only to their own origin: no inline script
 * or style, no framing. Stricter than nothing, looser than the API's `default-src 'none'`, which would block
 * the page's own files.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "font-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** A new password asked twice (setup, reset, accepting an invitation); the form's handler compares the two. */
export const NEW_PASSWORD_FIELDS = `<label for="password">New password (at least ${PASSWORD_MIN_LENGTH} characters)</label>
  <input id="password" name="password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" required>
  <label for="password_again">New password again</label>
  <input id="password_again" name="password_again" type="password" autocomplete="new-password" required>`;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface Layout {
  title: string;
  /** Trusted HTML (built with escapeHtml around every value). */
  body: string;
  /** The nav bar of a logged-in member (sites, members and API settings for admins, account, log out), or none. */
  nav?: { csrf: string; email: string; role?: string } | undefined;
  /** data-* attributes of <main>, telling the page script what to show. */
  data?: Record<string, string>;
  /** The session's anti-CSRF value, for the page script's /v1 calls. */
  csrf?: string | undefined;
  withScript?: boolean;
  /** Without the top bar (an embedded share page shows the report alone). Default true. */
  chrome?: boolean;
  /** An embedded share page's own session, sent by its script in a header (it gets no cookies in a frame). */
  shareSession?: string | undefined;
}

export function renderPage(l: Layout): string {
  const data = Object.entries(l.data ?? {})
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');
  const nav = l.nav
    ? `<nav class="top" aria-label="Main">
  <a class="brand" href="/sites">Plumb</a>
  <a href="/sites">Sites</a>
  ${l.nav.role === 'viewer' ? '' : '<a href="/settings/members">Members</a>\n  <a href="/settings/api">API settings</a>'}
  <a href="/account">Account</a>
  <form method="post" action="/logout" class="logout">
    <input type="hidden" name="csrf" value="${escapeHtml(l.nav.csrf)}">
    <button type="submit" class="link" title="Log out ${escapeHtml(l.nav.email)}">Log out</button>
  </form>
</nav>`
    : `<nav class="top" aria-label="Main"><span class="brand">Plumb</span></nav>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
${l.csrf ? `<meta name="plumb-csrf" content="${escapeHtml(l.csrf)}">` : ''}
${l.shareSession ? `<meta name="plumb-share-session" content="${escapeHtml(l.shareSession)}">` : ''}
<title>${escapeHtml(l.title)} · Plumb</title>
<link rel="icon" href="/dashboard/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/app.css">
${l.withScript ? '<script src="/dashboard/app.js" defer></script>' : ''}
</head>
<body${l.chrome === false ? ' class="embedded"' : ''}>
${l.chrome === false ? '' : `<header>${nav}</header>`}
<main id="app"${data}>
${l.body}
</main>
</body>
</html>
`;
}

/** The dashboard's CSP with another `frame-ancestors` (an embeddable share page). */
export const cspWithFrameAncestors = (directive: string) => DASHBOARD_CSP.replace("frame-ancestors 'none'", directive);

export function sendPage(reply: FastifyReply, status: number, html: string, csp = DASHBOARD_CSP): FastifyReply {
  return reply
    .code(status)
    .header('content-security-policy', csp)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
}

/** A page with just a heading and a message (not found, refused, too many attempts). */
export function messagePage(title: string, message: string): string {
  return renderPage({ title, body: `<section class="card narrow"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></section>` });
}

// The account messages Plumb sends (invitation, password reset, email change, and the notice to an address asked
// for that already has a login): a subject, a plain-text part and an HTML part that say the same thing, every value
// escaped.

import type { Mail } from './mailer.js';

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A minimal HTML body: no remote images, no script, inline style only (mail clients drop stylesheets). */
export function htmlMail(title: string, paragraphs: string[], action?: { label: string; url: string }): string {
  const button = action
    ? `<p><a href="${escapeHtml(action.url)}" style="display:inline-block;padding:10px 16px;background:#2457c5;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(action.label)}</a></p>
<p style="color:#555;font-size:13px">Or open this address: ${escapeHtml(action.url)}</p>`
    : '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#222;max-width:560px;margin:24px auto;padding:0 16px">
<h1 style="font-size:20px">${escapeHtml(title)}</h1>
${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}
${button}
</body></html>`;
}

export function invitationMail(o: { to: string; accountName: string; inviter: string; role: string; link: string; expiresAt: Date }): Mail {
  const title = `You are invited to ${o.accountName} on Plumb`;
  const lines = [
    `${o.inviter} invited you to the Plumb analytics account "${o.accountName}" as ${o.role === 'admin' ? 'an admin' : `a ${o.role}`}.`,
    `The invitation works once and until ${o.expiresAt.toUTCString()}.`,
  ];
  return {
    to: o.to,
    subject: title,
    text: `${lines.join('\n\n')}\n\nAccept it here:\n${o.link}\n`,
    html: htmlMail(title, lines, { label: 'Accept the invitation', url: o.link }),
  };
}

export function resetMail(o: { to: string; link: string; minutes: number }): Mail {
  const title = 'Reset your Plumb password';
  const lines = [
    'Someone (we hope you) asked to reset the password of the Plumb login with this address.',
    `The link works once, for ${o.minutes} minutes. If you did not ask, ignore this message: your password stays as it is.`,
  ];
  return {
    to: o.to,
    subject: title,
    text: `${lines.join('\n\n')}\n\nChoose a new password here:\n${o.link}\n`,
    html: htmlMail(title, lines, { label: 'Choose a new password', url: o.link }),
  };
}

export function emailChangeMail(o: { to: string; link: string; hours: number }): Mail {
  const title = 'Confirm your new email address for Plumb';
  const lines = [
    'Your Plumb login asked to use this address from now on.',
    `Confirm it within ${o.hours} hours with the link below (it works once). Until then the old address stays.`,
  ];
  return {
    to: o.to,
    subject: title,
    text: `${lines.join('\n\n')}\n\nConfirm here:\n${o.link}\n`,
    html: htmlMail(title, lines, { label: 'Confirm this address', url: o.link }),
  };
}

/**
 * To an address asked for as a login's new email while it already has a login of its own: the member who asked got
 * the answer a free address gets (so nobody learns which addresses have logins here), and the address's owner is
 * told instead, with no link, since nothing can change.
 */
export function emailTakenMail(o: { to: string; publicUrl: string }): Mail {
  const title = 'This address already has a Plumb login';
  const lines = [
    'A Plumb login asked to use this address from now on. This address already has a login of its own, so nothing changed: both logins stay as they are.',
    `If that was you, log in with this address at ${o.publicUrl}/login (a forgotten password can be reset at ${o.publicUrl}/forgot). If it was not, ignore this message.`,
  ];
  return {
    to: o.to,
    subject: title,
    text: `${lines.join('\n\n')}\n`,
    html: htmlMail(title, lines),
  };
}

// Changing the email tells a member nothing about other logins: an address that already has a Plumb login gets the
// same HTTP answer as a free one, and the difference is only in the mail, read from a real SMTP server: the free
// address gets its confirmation link, the taken one a notice without a link, and nothing changes.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { linkIn, startMailbox, type Mailbox } from '../helpers/mail.js';
import { addMember, Browser, logIn, newLogin, PASSWORD } from './helpers.js';

const PUBLIC_URL = 'https://plumb.example.test';

describe('email change: no probing for logins', () => {
  let t: TestApp;
  let mailbox: Mailbox;
  before(async () => {
    mailbox = await startMailbox();
    t = await startTestApp({ mail: { smtpUrl: mailbox.url, publicUrl: PUBLIC_URL } });
  });
  after(async () => {
    await t.close();
    await mailbox.close();
  });

  it('answers a taken address as a free one, and says so in the mail instead', async () => {
    // The one asking is a viewer: the least a member can be.
    const viewer = await addMember(t.team, 1, 'viewer');
    const b = new Browser(t.app);
    const csrf = await logIn(b, viewer.email);
    const taken = await newLogin(t.meta);
    const free = `free.${process.pid}@example.test`;

    const ask = (email: string) =>
      b.request({
        method: 'POST',
        url: '/dashboard/api/account/email',
        headers: { accept: 'application/json', 'x-plumb-csrf': csrf },
        payload: { email, current_password: PASSWORD },
      });
    /** What a client sees of an answer, with the address it echoes put back as EMAIL (and the clock's header out). */
    const seen = (res: LightMyRequestResponse, email: string) => {
      const { date: _date, 'content-length': length, ...headers } = res.headers;
      return {
        status: res.statusCode,
        headers,
        length: Number(length) - Buffer.byteLength(email),
        body: res.body.split(JSON.stringify(email)).join('"EMAIL"'),
      };
    };

    const freeAnswer = await ask(free);
    const takenAnswer = await ask(taken.email);
    // Another login's address in other letter case is the same login (emails compare case-insensitively).
    const shouted = taken.email.toUpperCase();
    const shoutedAnswer = await ask(shouted);
    assert.equal(freeAnswer.statusCode, 200, freeAnswer.body);
    assert.deepEqual(JSON.parse(freeAnswer.body), { object: 'email_change', email: free, sent: true });
    assert.deepEqual(seen(takenAnswer, taken.email), seen(freeAnswer, free));
    assert.deepEqual(seen(shoutedAnswer, shouted), seen(freeAnswer, free));

    // The free address gets the link that changes the login's email.
    const confirm = await mailbox.waitFor(free, /^Confirm your new email/);
    assert.match(linkIn(confirm, `${PUBLIC_URL}/confirm-email/`), /^https:\/\/plumb\.example\.test\/confirm-email\/\S+$/);

    // The taken one is told it already has a login, and gets no link that could change anything.
    const notice = await mailbox.waitFor(taken.email, /already has a Plumb login/);
    const shoutedNotice = await mailbox.waitFor(taken.email, /already has a Plumb login/, 2);
    for (const m of [notice, shoutedNotice]) {
      assert.match(m.text ?? '', /already has a login of its own, so nothing changed/);
      assert.match(m.text ?? '', new RegExp(`${PUBLIC_URL.replace(/\./g, '\\.')}/login\\b`));
      assert.doesNotMatch(m.text ?? '', /confirm-email/);
      assert.doesNotMatch(String(m.html), /confirm-email/);
    }
    assert.equal(mailbox.to(taken.email).length, 2, 'one notice per request, nothing else');

    // Nothing changed: the viewer keeps their address, the other login keeps theirs.
    assert.equal((await b.api('GET', '/dashboard/api/me', csrf)).body.user.email, viewer.email);
    await logIn(new Browser(t.app), taken.email);
    await logIn(new Browser(t.app), viewer.email);
  });

  it('a wrong password is refused alike for both, and one\'s own address still gets its confirmation', async () => {
    const viewer = await addMember(t.team, 1, 'viewer');
    const b = new Browser(t.app);
    const csrf = await logIn(b, viewer.email);
    const taken = await newLogin(t.meta);
    // Own address again: still the confirmation mail (nothing to hide from oneself), never the notice.
    const own = await b.api('POST', '/dashboard/api/account/email', csrf, { email: viewer.email, current_password: PASSWORD });
    assert.equal(own.status, 200);
    await mailbox.waitFor(viewer.email, /^Confirm your new email/);
    // A wrong password is refused first, whoever has the address.
    const wrongFree = await b.api('POST', '/dashboard/api/account/email', csrf, { email: `x.${process.pid}@example.test`, current_password: 'not the password' });
    const wrongTaken = await b.api('POST', '/dashboard/api/account/email', csrf, { email: taken.email, current_password: 'not the password' });
    assert.equal(wrongFree.status, 400);
    assert.deepEqual(wrongTaken, { ...wrongFree, headers: { ...wrongFree.headers, date: wrongTaken.headers.date } });
    assert.equal(mailbox.to(taken.email).length, 0);
  });
});

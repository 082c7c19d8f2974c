// Sends email reports on time: every minute each process looks for subscriptions whose period (a week or a month,
// in the site's zone) has ended and takes a lease on each report in the shared store before sending it, so that
// with any number of processes every report goes out exactly once (a process that dies mid-send lets its lease
// lapse, and another sends it).

import { randomUUID } from 'node:crypto';
import { lastCompletePeriod, localDate } from '../domain/report-periods.js';
import { newTokenSecret } from '../domain/ids.js';
import { hashToken } from '../domain/secrets.js';
import type { ReportEngine } from '../report/engine.js';
import type { TeamStore } from '../store/team-types.js';
import type { MetaStore } from '../store/types.js';
import type { Mailer } from './mailer.js';
import { gatherReport, reportMail } from './report-email.js';

export interface ReportSchedulerDeps {
  meta: MetaStore;
  team: TeamStore;
  engine: ReportEngine;
  mailer: Mailer;
  publicUrl: string;
  log: (err: unknown, message: string) => void;
  /** Told after a tick that found reports due: how many, and how many this process sent. */
  info?: (fields: { due: number; sent: number }, message: string) => void;
}

/** How long a process may take to send one report before another may try. */
export const LEASE_MS = 10 * 60_000;

export class ReportScheduler {
  /** This process, as the holder of leases. */
  readonly owner = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(private readonly deps: ReportSchedulerDeps) {}

  /** Ticks every `intervalMs`, the first time after `firstMs`. */
  start(intervalMs = 60_000, firstMs = 5_000): void {
    const tick = () => {
      if (this.running) return;
      this.running = this.runOnce()
        .catch((err: unknown) => {
          this.deps.log(err, 'email reports: a tick failed');
          return 0;
        })
        .finally(() => (this.running = undefined));
    };
    this.timer = setTimeout(() => {
      tick();
      this.timer = setInterval(tick, intervalMs);
      this.timer.unref();
    }, firstMs);
    this.timer.unref();
  }

  /** Sends every report due at `now` that no process has sent or is sending; returns how many this one sent. */
  async runOnce(now = new Date()): Promise<number> {
    const { meta, team, engine, mailer, publicUrl } = this.deps;
    let sent = 0;
    let due = 0;
    for (const s of await team.listAllSubscriptions()) {
      const site = await meta.getSite(s.siteId);
      if (!site || site.accountId !== s.accountId) {
        await team.deleteSubscription(s.id);
        continue;
      }
      // Only members who may still see the site get its report (a viewer's sites may have changed).
      const [membership, user] = await Promise.all([team.getMembership(s.accountId, s.userId), team.getUser(s.userId)]);
      if (!membership || !user || (membership.siteIds !== null && !membership.siteIds.includes(site.id))) continue;
      const period = lastCompletePeriod(s.frequency, site.timezone, now);
      // A subscription gets the periods that end after it was made, never one already over.
      if (localDate(site.timezone, s.createdAt) > period.to) continue;
      const secret = newTokenSecret();
      due += 1;
      if (!(await team.claimDelivery(s.id, period.from, this.owner, new Date(now.getTime() + LEASE_MS), now, hashToken(secret)))) continue;
      try {
        const report = await gatherReport(engine, meta, site, period);
        const mail = reportMail(report, {
          to: user.email,
          reportUrl: `${publicUrl}/sites/${site.id}`,
          unsubscribeUrl: `${publicUrl}/unsubscribe/${secret}`,
        });
        await mailer.send(mail);
        await team.markDelivered(s.id, period.from, this.owner, new Date());
        sent += 1;
      } catch (err) {
        this.deps.log(err, `email reports: sending ${s.frequency} report ${period.from} of ${site.id} failed; retried next tick`);
        await team.releaseDelivery(s.id, period.from, this.owner).catch(() => undefined);
      }
    }
    if (due > 0) this.deps.info?.({ due, sent }, 'email reports: tick done');
    return sent;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    await this.running;
  }
}

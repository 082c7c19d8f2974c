// "Send this report now": one site's email report of its last complete week or month, sent at once to one address
// (the member asking, from the dashboard, or an address an admin gives), so mail can be tried without waiting for
// a period to end. The numbers are gathered as the scheduled report gathers them (gatherReport), so they equal
// /v1/aggregations for that period.

import { badRequest, RetryLater } from '../domain/errors.js';
import { lastCompletePeriod, type ReportFrequency, type ReportPeriod } from '../domain/report-periods.js';
import type { ReportEngine } from '../report/engine.js';
import type { MetaStore, Site } from '../store/types.js';
import type { Mailer } from './mailer.js';
import { gatherReport, reportMail } from './report-email.js';

/** The periods one can ask for, and the report each is (a week's report is the weekly one). */
export const REPORT_NOW_PERIODS = { last_week: 'weekly', last_month: 'monthly' } as const satisfies Record<string, ReportFrequency>;
export type ReportNowPeriod = keyof typeof REPORT_NOW_PERIODS;

/** Sends a person (or an admin, per instance) may ask for in a minute: enough to try twice, too few to spam with. */
export const REPORTS_NOW_PER_MINUTE = 3;

/** 503 `{ error }` with Retry-After: the SMTP server refused the message or could not be reached. */
export class MailUnavailable extends RetryLater {
  constructor(message: string) {
    super(message, 60);
  }
}

export interface ReportNowDeps {
  engine: ReportEngine;
  meta: MetaStore;
  mailer: Mailer;
  /** Links in the mail point here; without it no report is sent (as the scheduler sends none). */
  publicUrl: string | undefined;
}

/** The 400 of a server that cannot send reports. */
export const noReportMail = () =>
  badRequest('Email reports need outgoing mail, which this server has not configured (PLUMB_SMTP_URL and PLUMB_PUBLIC_URL)');

/** Throws noReportMail unless this server can send reports (the scheduler's condition: SMTP and a public URL). */
export function checkReportMail(deps: { mailer: Pick<Mailer, 'configured'>; publicUrl: string | undefined }): void {
  if (!deps.mailer.configured || deps.publicUrl === undefined) throw noReportMail();
}

/** Gathers and sends the report; returns its period. */
export async function sendReportNow(deps: ReportNowDeps, site: Site, period: ReportNowPeriod, to: string, now = new Date()): Promise<ReportPeriod> {
  checkReportMail(deps);
  const p = lastCompletePeriod(REPORT_NOW_PERIODS[period], site.timezone, now);
  const report = await gatherReport(deps.engine, deps.meta, site, p);
  // No unsubscribe link: nothing was subscribed to, and nothing more is sent.
  const mail = reportMail(report, { to, reportUrl: `${deps.publicUrl}/sites/${site.id}` });
  try {
    await deps.mailer.send(mail);
  } catch {
    throw new MailUnavailable('The mail server did not take the report: check PLUMB_SMTP_URL, or retry in a minute');
  }
  return p;
}

// Outgoing mail. With SMTP_URL, nodemailer sends over SMTP; without it, every message is written
// to the `mail_outbox` table and the log, so verification and reset links work offline in
// development (ARCHITECTURE.md "Email"). The outbox then holds those links in clear: it is a
// development transport, and production configures SMTP.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import './mail.tables.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}

export class SmtpMailer implements Mailer {
  readonly kind = 'smtp' as const;
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    // A connection string such as smtp://user:pass@host:587 or smtps://host:465.
    this.transport = nodemailer.createTransport(smtpUrl);
  }

  async send(m: MailMessage): Promise<void> {
    await this.transport.sendMail({
      from: this.from,
      to: m.to,
      subject: m.subject,
      text: m.text,
      ...(m.html ? { html: m.html } : {}),
    });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

export class OutboxMailer implements Mailer {
  readonly kind = 'outbox' as const;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  async send(m: MailMessage): Promise<void> {
    await this.db
      .insertInto('mail_outbox')
      .values({ recipient: m.to, subject: m.subject, text_body: m.text, html_body: m.html ?? null })
      .execute();
    this.log.info(
      { to: m.to, subject: m.subject, text: m.text },
      'mail written to the outbox (no SMTP_URL configured)',
    );
  }

  async close(): Promise<void> {}
}

export function createMailer(
  config: { smtpUrl: string | undefined; from: string },
  db: Db,
  log: Logger,
): Mailer {
  return config.smtpUrl ? new SmtpMailer(config.smtpUrl, config.from) : new OutboxMailer(db, log);
}

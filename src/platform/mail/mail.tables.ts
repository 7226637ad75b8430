import type { CreatedAt, Generated } from '../db/schema.js';

/** Mail written instead of sent when no SMTP server is configured (migration 0040). */
export interface MailOutboxTable {
  id: Generated<number>;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  created_at: CreatedAt;
}

declare module '../db/schema.js' {
  interface Database {
    mail_outbox: MailOutboxTable;
  }
}

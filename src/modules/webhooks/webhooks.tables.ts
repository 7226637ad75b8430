import type { ColumnType } from 'kysely';
import type { CreatedAt, Generated, UpdatedAt } from '../../platform/db/schema.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** A registered endpoint (migration 0086). */
export interface WebhooksTable {
  id: string;
  url: string;
  event_types: string[];
  observer_id: number | null;
  description: Generated<string>;
  enabled: Generated<boolean>;
  secret_ciphertext: string;
  created_by_user_id: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: number | null;
  event_type: string;
  body: string;
  status: Generated<DeliveryStatus>;
  attempts: Generated<number>;
  last_status_code: number | null;
  last_error: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  delivered_at: ColumnType<Date | null, never, Date | null>;
}

export interface WebhookDeliveryAttemptsTable {
  delivery_id: string;
  attempt: number;
  attempted_at: CreatedAt;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    webhooks: WebhooksTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  }
}

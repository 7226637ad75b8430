// The bytes of a timeline export (contract: "Observer"): JSON or RFC 4180 CSV, made batch by
// batch as the client reads. The stream asks the cursor for its next batch only when the bytes
// before it have been taken (its buffer is below the high-water mark), so an export holds one
// batch at a time whatever its size, and a client that stops reading stops the reading of rows.
// Destroying the stream (a client gone) closes the cursor.
import { Readable } from 'node:stream';
import type { TimelineExport, TimelineEvent } from '../timeline/index.js';
import { csvHeader, csvRecord } from './observer.rules.js';

export type ExportFormat = 'json' | 'csv';

/** How long an export's connection may stay without a byte moving before it is closed. */
export const EXPORT_STALL_MS = 60_000;

export interface ExportHead {
  observerId: number;
  exportedAt: string;
  truncated: boolean;
}

export const EXPORT_CONTENT_TYPE: Record<ExportFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** What comes before the first event, between events, and after the last. */
function framing(format: ExportFormat, head: ExportHead) {
  if (format === 'csv') return { open: csvHeader(), record: csvRecord, separator: '', close: '' };
  const { observerId, exportedAt, truncated } = head;
  return {
    open: `${JSON.stringify({ observerId, exportedAt, truncated }).slice(0, -1)},"events":[`,
    record: (e: TimelineEvent) => JSON.stringify(e),
    separator: ',',
    close: ']}',
  };
}

export function exportStream(
  format: ExportFormat,
  head: ExportHead,
  events: TimelineExport['events'],
): Readable {
  const f = framing(format, head);
  let started = false;
  let first = true;
  const stream = new Readable({
    read() {
      const pull = async () => {
        const batch = await events.next();
        const parts: string[] = [];
        if (!started) {
          started = true;
          parts.push(f.open);
        }
        for (const e of batch) {
          if (!first) parts.push(f.separator);
          first = false;
          parts.push(f.record(e));
        }
        if (batch.length === 0) parts.push(f.close);
        stream.push(parts.join(''));
        if (batch.length === 0) stream.push(null);
      };
      pull().catch((err: unknown) => stream.destroy(err instanceof Error ? err : new Error(String(err))));
    },
    destroy(err, cb) {
      events.close().then(
        () => cb(err),
        () => cb(err),
      );
    },
  });
  return stream;
}

import type { WabaStatuses } from '@switchboard/proto';

export interface StatusRow {
  status: string;
  timestamp: number;
  errors: unknown;
}

/**
 * Folds every status seen for one message into `waba_statuses`. Order and duplicates do not
 * matter: each value keeps its own time, and a later stage implies the earlier ones (read
 * implies delivered implies sent), so the result never goes backwards.
 */
export function foldStatuses(rows: readonly StatusRow[]): WabaStatuses {
  const at = (s: string) => rows.find((r) => r.status === s)?.timestamp;
  const read = at('read');
  const delivered = at('delivered') ?? read;
  const sent = at('sent') ?? delivered;
  const failedRow = rows.find((r) => r.status === 'failed');
  const out: WabaStatuses = {};
  if (sent !== undefined) out.sent = sent;
  if (delivered !== undefined) out.delivered = delivered;
  if (read !== undefined) out.read = read;
  if (failedRow) {
    out.failed = {
      timestamp: failedRow.timestamp,
      errors: Array.isArray(failedRow.errors) ? failedRow.errors : [],
    };
  }
  return out;
}

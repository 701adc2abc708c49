const HOUR = 3600;

/** The care window a customer message opens: 24 h, or 72 h when it came from an ad (referral). */
export function customerWindowEnd(messageTimestamp: number, fromAd: boolean): number {
  return messageTimestamp + (fromAd ? 72 : 24) * HOUR;
}

/** A template the business sends opens a window too (spec, section 1). */
export function businessWindowEnd(sentAt: number): number {
  return sentAt + 24 * HOUR;
}

/** The chat's window: the latest of what customer messages, templates and the network granted. */
export function windowExpiresAt(chat: {
  customer_window_expires_at: number | null;
  network_window_expires_at: number | null;
  business_window_expires_at: number | null;
}): number | null {
  const ends = [
    chat.customer_window_expires_at,
    chat.network_window_expires_at,
    chat.business_window_expires_at,
  ].filter((v): v is number => v !== null);
  return ends.length ? Math.max(...ends) : null;
}

/** The customer service window a customer message opens. */
export const WINDOW_SECONDS = 24 * 3600;
/** A conversation a customer starts from a Click-to-WhatsApp ad stays open longer. */
export const AD_REFERRAL_WINDOW_SECONDS = 72 * 3600;

export function isWindowOpen(expiresAt: number | undefined, nowSeconds: number): boolean {
  return expiresAt !== undefined && nowSeconds < expiresAt;
}

/**
 * The window after a customer message sent at `sentAt`. A message never shortens a window
 * (a late, backdated delivery arrives after newer ones); an ad referral counts only on the
 * message that opens the window.
 */
export function windowAfterCustomerMessage(
  current: number | undefined,
  sentAt: number,
  fromAdReferral: boolean,
): number {
  const opening = !isWindowOpen(current, sentAt);
  const length = fromAdReferral && opening ? AD_REFERRAL_WINDOW_SECONDS : WINDOW_SECONDS;
  return Math.max(current ?? 0, sentAt + length);
}

/** Only when the number is configured so: the inbox spec lets a template open a window, Meta does not. */
export function windowAfterTemplate(current: number | undefined, nowSeconds: number): number {
  return Math.max(current ?? 0, nowSeconds + WINDOW_SECONDS);
}

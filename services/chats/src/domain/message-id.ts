const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a message id asked for may be the message's own id (a UUID) rather than only a wamid. */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/** The current time in whole POSIX seconds. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

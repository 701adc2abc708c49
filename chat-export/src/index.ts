export { formatLocal, parseChatExport } from './parse.ts';
export type * from './types.ts';

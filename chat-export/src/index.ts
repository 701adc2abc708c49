export { mediaKindOfFile, senderNumber } from './body.ts';
export { dateOrderForLanguage } from './calendar.ts';
export { LANGUAGES, type LanguageTable } from './languages.ts';
export { formatLocal, parseChatExport } from './parse.ts';
export type * from './types.ts';

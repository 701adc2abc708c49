import { z } from 'zod';
import type { TemplateComponentParameters } from './outbound.ts';

export const TemplateButtonSchema = z.looseObject({
  type: z.string(),
  text: z.string(),
  url: z.string().optional(),
  phone_number: z.string().optional(),
  example: z.unknown().optional(),
});

export const TemplateComponentSchema = z.looseObject({
  type: z.enum(['HEADER', 'BODY', 'FOOTER', 'BUTTONS']),
  format: z.enum(['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION']).optional(),
  text: z.string().optional(),
  example: z.unknown().optional(),
  buttons: z.array(TemplateButtonSchema).optional(),
});
export type TemplateComponent = z.infer<typeof TemplateComponentSchema>;

/** One approved (or pending, rejected...) template of the number's WhatsApp Business Account. */
export const TemplateSchema = z.looseObject({
  id: z.string().optional(),
  name: z.string().min(1),
  language: z.string().min(2),
  /** `approved`, `pending`, `rejected`, `paused`, `disabled` (the provider writes them in lower case). */
  status: z.string(),
  category: z.string(),
  namespace: z.string().optional(),
  rejected_reason: z.string().optional(),
  components: z.array(TemplateComponentSchema),
});
export type Template = z.infer<typeof TemplateSchema>;

/** `GET /v1/configs/templates` answer. */
export const TemplateListSchema = z.looseObject({
  count: z.number().int().nonnegative(),
  filters: z.record(z.string(), z.unknown()),
  limit: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative(),
  sort: z.array(z.string()),
  total: z.number().int().nonnegative(),
  waba_templates: z.array(TemplateSchema),
});
export type TemplateList = z.infer<typeof TemplateListSchema>;

export const TemplateListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});
export type TemplateListQuery = z.infer<typeof TemplateListQuerySchema>;

/** Number of distinct `{{1}}` / `{{name}}` placeholders in a component text. */
export function placeholderCount(text: string | undefined): number {
  if (!text) return 0;
  const names = new Set<string>();
  for (const m of text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)) if (m[1]) names.add(m[1]);
  return names.size;
}

export interface ParameterSlot {
  /** `header`, `body` or `button:<index>`. */
  readonly slot: string;
  readonly expected: number;
}

/** The parameters a send must supply for each part of the template. */
export function templateParameterSlots(template: Template): ParameterSlot[] {
  const slots: ParameterSlot[] = [];
  for (const c of template.components) {
    if (c.type === 'HEADER') {
      const media = c.format !== undefined && c.format !== 'TEXT';
      slots.push({ slot: 'header', expected: media ? 1 : placeholderCount(c.text) });
    } else if (c.type === 'BODY') {
      slots.push({ slot: 'body', expected: placeholderCount(c.text) });
    } else if (c.type === 'BUTTONS') {
      (c.buttons ?? []).forEach((b, index) => {
        if (b.type.toUpperCase() === 'URL')
          slots.push({ slot: `button:${index}`, expected: placeholderCount(b.url) });
      });
    }
  }
  return slots;
}

/** Parameters a send supplies per slot, in the same naming as `templateParameterSlots`. */
export function suppliedParameterCounts(
  components: readonly TemplateComponentParameters[] | undefined,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of components ?? []) {
    const slot = c.type === 'button' ? `button:${Number(c.index ?? 0)}` : c.type;
    counts.set(slot, (counts.get(slot) ?? 0) + (c.parameters?.length ?? 0));
  }
  return counts;
}

export interface ParameterMismatch {
  readonly slot: string;
  readonly expected: number;
  readonly supplied: number;
}

/** Slots whose supplied parameter count differs from the template's; empty when the send fits. */
export function templateParameterMismatches(
  template: Template,
  components: readonly TemplateComponentParameters[] | undefined,
): ParameterMismatch[] {
  const supplied = suppliedParameterCounts(components);
  const expected = templateParameterSlots(template);
  const known = new Set(expected.map((s) => s.slot));
  const mismatches: ParameterMismatch[] = [];
  for (const { slot, expected: n } of expected) {
    const got = supplied.get(slot) ?? 0;
    if (got !== n) mismatches.push({ slot, expected: n, supplied: got });
  }
  for (const [slot, got] of supplied) {
    if (!known.has(slot) && got > 0) mismatches.push({ slot, expected: 0, supplied: got });
  }
  return mismatches;
}

import type { HttpServer } from '@switchboard/kit';
import { TemplateListQuerySchema, TemplateListSchema } from '../domain/wire.ts';
import type { SandboxState } from '../store/store.ts';
import { networkRoute, numberOf } from './network-auth.ts';

export function registerTemplateRoutes(app: HttpServer, deps: { state: SandboxState }): void {
  app.get(
    '/v1/configs/templates',
    networkRoute(deps.state, {
      tags: ['templates'],
      summary: 'List templates',
      description:
        'The WhatsApp Business Account’s templates with status, category and components (`{{1}}` placeholders). ' +
        'Template sends are checked against this list.',
      querystring: TemplateListQuerySchema,
      response: { 200: TemplateListSchema },
    }),
    async (req) => {
      const all = numberOf(req).templates;
      const limit = req.query.limit ?? 1000;
      const offset = req.query.offset ?? 0;
      const page = all.slice(offset, offset + limit);
      return {
        count: page.length,
        filters: {},
        limit,
        offset,
        sort: ['business_templates.name'],
        total: all.length,
        waba_templates: page,
      };
    },
  );
}

import type { HttpServer } from '@switchboard/kit';
import { z } from 'zod';
import type { NumberBehaviour } from '../../config.ts';
import { failures, NetworkFailure } from '../../domain/failure.ts';
import { CloudApiErrorBodySchema, NetworkErrorCode } from '../../domain/wire.ts';
import type { BusinessNumber } from '../../store/model.ts';
import { DuplicateNumberError, type SandboxState } from '../../store/store.ts';
import {
  controlRoute,
  NumberCreateSchema,
  NumberIdParams,
  NumberPatchSchema,
  NumberSchema,
} from './schemas.ts';
import { numberView } from './views.ts';

type BehaviourInput = z.infer<typeof NumberCreateSchema>['behaviour'];

function behaviourPatch(current: NumberBehaviour, input: BehaviourInput): NumberBehaviour {
  if (!input) return current;
  return {
    statusDelaysMs: {
      sent: input.status_delays_ms?.sent ?? current.statusDelaysMs.sent,
      delivered: input.status_delays_ms?.delivered ?? current.statusDelaysMs.delivered,
      read: input.status_delays_ms?.read ?? current.statusDelaysMs.read,
    },
    readWithoutDeliveredRate: input.read_without_delivered_rate ?? current.readWithoutDeliveredRate,
    duplicateStatusRate: input.duplicate_status_rate ?? current.duplicateStatusRate,
    rateLimitPerSecond: input.rate_limit_per_second ?? current.rateLimitPerSecond,
    templateOpensWindow: input.template_opens_window ?? current.templateOpensWindow,
  };
}

function numberById(state: SandboxState, id: string): BusinessNumber {
  const n = state.byId(id);
  if (!n) throw failures.notFound(id);
  return n;
}

export function registerNumberRoutes(app: HttpServer, deps: { state: SandboxState }): void {
  app.post(
    '/sandbox/numbers',
    controlRoute({
      summary: 'Create a business number',
      description:
        'A new business phone number with its provider API key (the `D360-API-KEY` for every Cloud API call) and ' +
        'its app secret (the key of `X-Hub-Signature-256`). Every field is generated when omitted.',
      body: NumberCreateSchema,
      response: { 201: NumberSchema, 400: CloudApiErrorBodySchema, 409: CloudApiErrorBodySchema },
    }),
    async (req, reply) => {
      const b = req.body;
      try {
        const created = deps.state.createNumber({
          displayPhoneNumber: b.display_phone_number,
          phoneNumberId: b.phone_number_id,
          wabaId: b.waba_id,
          apiKey: b.api_key,
          webhookSecret: b.webhook_secret,
          webhookUrl: b.webhook_url,
          templates: b.templates,
        });
        created.behaviour = behaviourPatch(created.behaviour, b.behaviour);
        return reply.status(201).send(numberView(created));
      } catch (err) {
        if (err instanceof DuplicateNumberError) {
          throw new NetworkFailure(NetworkErrorCode.invalidParameter, err.message, { status: 409 });
        }
        throw err;
      }
    },
  );

  app.get(
    '/sandbox/numbers',
    controlRoute({
      summary: 'List business numbers',
      response: { 200: z.object({ numbers: z.array(NumberSchema) }) },
    }),
    async () => ({ numbers: deps.state.list().map(numberView) }),
  );

  app.get(
    '/sandbox/numbers/:phone_number_id',
    controlRoute({
      summary: 'Read a business number',
      params: NumberIdParams,
      response: { 200: NumberSchema, 400: CloudApiErrorBodySchema },
    }),
    async (req) => numberView(numberById(deps.state, req.params.phone_number_id)),
  );

  app.patch(
    '/sandbox/numbers/:phone_number_id',
    controlRoute({
      summary: 'Change a number’s behaviour or templates',
      description:
        'Status delays, how often `read` skips `delivered`, duplicate statuses, the per-second rate limit (130429 ' +
        'beyond it; 0 is unlimited), whether templates open the window, and the template list.',
      params: NumberIdParams,
      body: NumberPatchSchema,
      response: { 200: NumberSchema, 400: CloudApiErrorBodySchema },
    }),
    async (req) => {
      const n = numberById(deps.state, req.params.phone_number_id);
      n.behaviour = behaviourPatch(n.behaviour, req.body.behaviour);
      if (req.body.templates) n.templates = req.body.templates;
      return numberView(n);
    },
  );
}

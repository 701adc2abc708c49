import type { HttpServer } from '@switchboard/kit';
import type { Fault } from '../../domain/faults.ts';
import { numberNowSeconds, type SandboxState } from '../../store/store.ts';
import { controlNumber } from '../network-auth.ts';
import {
  ClockSchema,
  ClockSetSchema,
  DeliveryListSchema,
  DeliveryQuerySchema,
  FaultListSchema,
  FaultRequestSchema,
  NumberSelectorQuery,
  numberControlRoute,
} from './schemas.ts';
import { deliveryView } from './views.ts';

export function registerClockAndFaultRoutes(app: HttpServer, deps: { state: SandboxState }): void {
  const { state } = deps;

  app.get(
    '/sandbox/clock',
    numberControlRoute({
      summary: 'Read the number’s clock',
      response: { 200: ClockSchema },
    }),
    async (req) => {
      const number = controlNumber(state, req);
      return {
        now: numberNowSeconds(state, number),
        offset_seconds: Math.round(number.clockOffsetMs / 1000),
      };
    },
  );

  app.put(
    '/sandbox/clock',
    numberControlRoute({
      summary: 'Shift the number’s clock',
      description:
        'Every time the number uses (windows, status and media timestamps) moves by `offset_seconds`, so a window ' +
        'can expire without waiting.',
      body: ClockSetSchema,
      response: { 200: ClockSchema },
    }),
    async (req) => {
      const number = controlNumber(state, req);
      number.clockOffsetMs = req.body.offset_seconds * 1000;
      return { now: numberNowSeconds(state, number), offset_seconds: req.body.offset_seconds };
    },
  );

  app.post(
    '/sandbox/faults',
    numberControlRoute({
      summary: 'Fail the next Cloud API calls',
      description:
        'The next `count` Cloud API calls of the number answer `status` (429 with code 130429, 500 with 131000, ' +
        '502/503 with 2), with `Retry-After` when `retry_after_seconds` is given. With `only: media_download`, ' +
        'only downloads of media URLs fail. Control calls are not affected.',
      body: FaultRequestSchema,
      response: { 200: FaultListSchema },
    }),
    async (req) => {
      const number = controlNumber(state, req);
      number.faults.push({
        status: req.body.status,
        remaining: req.body.count,
        retryAfterSeconds: req.body.retry_after_seconds,
        only: req.body.only,
      });
      return faultList(number.faults);
    },
  );

  app.get(
    '/sandbox/faults',
    numberControlRoute({
      summary: 'Pending injected faults',
      response: { 200: FaultListSchema },
    }),
    async (req) => faultList(controlNumber(state, req).faults),
  );

  app.delete(
    '/sandbox/faults',
    numberControlRoute({
      summary: 'Clear injected faults',
      response: { 200: FaultListSchema },
    }),
    async (req) => {
      const number = controlNumber(state, req);
      number.faults.splice(0);
      return faultList(number.faults);
    },
  );

  app.get(
    '/sandbox/webhook-deliveries',
    numberControlRoute({
      summary: 'Webhook deliveries and their attempts',
      description: 'Newest last. Filter by a wamid the body is about, or by state.',
      querystring: NumberSelectorQuery.extend(DeliveryQuerySchema.shape),
      response: { 200: DeliveryListSchema },
    }),
    async (req) => {
      const number = controlNumber(state, req);
      const { wamid, state: wanted } = req.query;
      const deliveries = number.deliveries
        .filter(
          (d) =>
            (wamid === undefined || d.refs.includes(wamid)) && (wanted === undefined || d.state === wanted),
        )
        .map(deliveryView);
      return { deliveries };
    },
  );
}

function faultList(faults: readonly Fault[]) {
  return {
    faults: faults.map((f) => ({
      status: f.status,
      remaining: f.remaining,
      retry_after_seconds: f.retryAfterSeconds ?? null,
      only: f.only ?? null,
    })),
  };
}

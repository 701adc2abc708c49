import type { FastifyRequest } from 'fastify';
import { failures, NetworkFailure } from '../domain/failure.ts';
import { type FaultScope, faultFailure, takeFault } from '../domain/faults.ts';
import { API_KEY_HEADER, NetworkErrorCode } from '../domain/wire.ts';
import type { BusinessNumber } from '../store/model.ts';
import type { SandboxState } from '../store/store.ts';
import { networkErrorResponses, networkSecurity } from './schemas.ts';

const resolved = new WeakMap<FastifyRequest, BusinessNumber>();

function apiKeyOf(req: FastifyRequest): string | undefined {
  const v = req.headers[API_KEY_HEADER.toLowerCase()];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/**
 * The `preValidation` hook of every Cloud API route: the key picks the business number (401
 * otherwise, before the body is looked at), then any injected fault answers instead.
 */
export function networkAuth(state: SandboxState, call?: FaultScope) {
  return async (req: FastifyRequest): Promise<void> => {
    const key = apiKeyOf(req);
    const number = key === undefined ? undefined : state.byApiKey(key);
    if (!number) throw failures.unauthorized();
    const fault = takeFault(number.faults, call);
    if (fault) throw faultFailure(fault);
    resolved.set(req, number);
  };
}

/** The number `networkAuth` resolved for this request. */
export function numberOf(req: FastifyRequest): BusinessNumber {
  const number = resolved.get(req);
  if (!number) throw failures.unauthorized();
  return number;
}

/**
 * Control calls act on one number: the one owning the `D360-API-KEY` when given, else
 * `?phone_number_id=`, else the seed number.
 */
export function controlNumber(
  state: SandboxState,
  req: FastifyRequest & { query: { phone_number_id?: string | undefined } },
): BusinessNumber {
  const phoneNumberId = req.query.phone_number_id;
  const key = apiKeyOf(req);
  if (key !== undefined) {
    const byKey = state.byApiKey(key);
    if (!byKey) throw failures.unauthorized();
    return byKey;
  }
  if (phoneNumberId !== undefined) {
    const byId = state.byId(phoneNumberId);
    if (!byId) throw failures.notFound(phoneNumberId);
    return byId;
  }
  if (state.seed) return state.seed;
  throw new NetworkFailure(
    NetworkErrorCode.requiredParameterMissing,
    'Name the number with D360-API-KEY or ?phone_number_id=; this sandbox has no seed number.',
  );
}

/**
 * The options of a Cloud API route: `networkAuth` runs first, and the schema documents the
 * `D360-API-KEY` and the error answers every such call can give, besides its own.
 */
export function networkRoute<S extends { response: Record<number, unknown> }>(
  state: SandboxState,
  schema: S,
) {
  return {
    preValidation: networkAuth(state),
    schema: {
      ...schema,
      security: networkSecurity,
      response: { ...schema.response, ...networkErrorResponses },
    },
  };
}

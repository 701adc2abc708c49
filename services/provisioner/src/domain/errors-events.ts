import type { ErrorsEvent } from '@switchboard/proto';

/**
 * The codes of the partner's errors event (spec 6.2). The same code always means a problem of
 * the same nature; 701 is the spec's, the others are this service's (README has the table).
 */
export const errorsEventCatalogue = {
  701: {
    title: 'Number already deployed',
    details:
      'The business phone number of this provider API key already has an inbox instance. Remove that instance or fix its key, then deploy again.',
  },
  702: {
    title: 'Invalid provider API key',
    details: 'The provider does not accept the provider API key given at creation.',
  },
  703: {
    title: 'Unknown channel',
    details: 'The provider has no channel with this channel_id for the partner, or refused a new key for it.',
  },
  704: {
    title: 'Allocation failed',
    details: 'The instance could not be started or did not become healthy in time.',
  },
} as const;

export type ErrorsEventCode = keyof typeof errorsEventCatalogue;

export interface CreationFailure {
  code: ErrorsEventCode;
  details?: string;
  parameters?: Record<string, string>;
}

export function errorsEvent(failure: CreationFailure): ErrorsEvent {
  const entry = errorsEventCatalogue[failure.code];
  return {
    errors: [
      {
        code: failure.code,
        title: entry.title,
        details: failure.details ?? entry.details,
        ...(failure.parameters && { parameters: failure.parameters }),
      },
    ],
  };
}

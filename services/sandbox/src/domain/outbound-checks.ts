import { NetworkFailure } from './failure.ts';
import { isWindowOpen } from './window.ts';
import {
  NetworkErrorCode,
  type OutboundMessage,
  outboundMediaIds,
  type Template,
  templateParameterMismatches,
} from './wire.ts';

export interface OutboundContext {
  readonly message: OutboundMessage;
  readonly waId: string;
  readonly nowSeconds: number;
  readonly windowExpiresAt: number | undefined;
  readonly blockedByBusiness: boolean;
  readonly templates: readonly Template[];
  readonly mediaExists: (id: string) => boolean;
}

export interface AcceptedOutbound {
  /** Pricing category of the statuses: the template's, or `service` for free-form. */
  readonly category: string;
  readonly template: Template | undefined;
}

function findTemplate(templates: readonly Template[], name: string, language: string): Template {
  const named = templates.filter((t) => t.name === name);
  const match = named.find((t) => t.language === language);
  if (match?.status.toLowerCase() !== 'approved') {
    throw new NetworkFailure(
      NetworkErrorCode.templateDoesNotExist,
      match
        ? `template name (${name}) is ${match.status.toLowerCase()} in ${language}, not approved`
        : `template name (${name}) does not exist in ${language}`,
    );
  }
  return match;
}

/**
 * What the network checks before it accepts a message, in its order: the business's own
 * block list, templates against the account's approved list, then the customer service
 * window for everything else, then uploaded media ids.
 */
export function checkOutbound(ctx: OutboundContext): AcceptedOutbound {
  if (ctx.blockedByBusiness) throw new NetworkFailure(NetworkErrorCode.recipientBlockedByBusiness);

  let template: Template | undefined;
  if (ctx.message.type === 'template') {
    const t = ctx.message.template;
    template = findTemplate(ctx.templates, t.name, t.language.code);
    const [mismatch] = templateParameterMismatches(template, t.components);
    if (mismatch) {
      throw new NetworkFailure(
        NetworkErrorCode.templateParamCountMismatch,
        `${mismatch.slot}: number of localizable_params (${mismatch.supplied}) does not match the expected number of params (${mismatch.expected})`,
      );
    }
  } else if (!isWindowOpen(ctx.windowExpiresAt, ctx.nowSeconds)) {
    throw new NetworkFailure(NetworkErrorCode.reEngagementMessage);
  }

  for (const id of outboundMediaIds(ctx.message)) {
    if (!ctx.mediaExists(id)) {
      throw new NetworkFailure(
        NetworkErrorCode.parameterValueNotValid,
        `Media id ${id} is not valid for this number.`,
      );
    }
  }
  return { category: template ? template.category.toLowerCase() : 'service', template };
}

import { connectNats, createLogger, handleShutdown, type Telemetry } from '@switchboard/kit';
import { PARTNER_SCOPE } from '@switchboard/proto';
import { createBus } from '@switchboard/proto/bus';
import { loadPartnerConfig } from './config.ts';
import { createPartnerGateway } from './service.ts';

export async function runPartnerGateway(telemetry: Telemetry): Promise<void> {
  const config = loadPartnerConfig();
  const log = createLogger('partner-gateway', config.LOG_LEVEL);
  const nc = await connectNats(config.NATS_URL, `partner-gateway/${PARTNER_SCOPE}`);
  const bus = await createBus(nc, PARTNER_SCOPE, {
    onServeError: (err, at) => log.error({ err, ...at }, 'request handler failed'),
  });
  const gateway = await createPartnerGateway({ bus, log, config });
  await gateway.start();
  handleShutdown(log, [
    ['partner-gateway', () => gateway.stop()],
    ['nats', () => nc.drain()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}

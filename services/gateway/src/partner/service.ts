import type { HttpServer, Logger } from '@switchboard/kit';
import type { Bus } from '@switchboard/proto/bus';
import { buildPartnerApp } from './app.ts';
import type { PartnerGatewayConfig } from './config.ts';

export interface PartnerGatewayService {
  readonly app: HttpServer;
  /** Listens on HOST:PORT. */
  start(): Promise<void>;
  /** Stops taking requests; those in flight finish. */
  stop(): Promise<void>;
}

/** The gateway in partner mode, wired from its dependencies (composition root). */
export async function createPartnerGateway(deps: {
  bus: Bus;
  log: Logger;
  config: PartnerGatewayConfig;
}): Promise<PartnerGatewayService> {
  const app = await buildPartnerApp(deps);
  return {
    app,
    async start() {
      await app.listen({ host: deps.config.HOST, port: deps.config.PORT });
    },
    async stop() {
      await app.close();
    },
  };
}

import { createLogger, handleShutdown, type Telemetry } from '@switchboard/kit';
import { loadConfig, settingsFromEnv } from './config.ts';
import { createSandbox } from './service.ts';

export async function runSandbox(telemetry: Telemetry): Promise<void> {
  const config = loadConfig();
  const log = createLogger('sandbox', config.LOG_LEVEL);
  const sandbox = await createSandbox({ settings: settingsFromEnv(config), log });
  const { state } = sandbox;
  await sandbox.start({ host: config.HOST, port: config.PORT });
  if (state.seed) {
    // The seed key is random unless configured: print it so a developer can use it.
    log.info(
      {
        phone_number_id: state.seed.phoneNumberId,
        display_phone_number: state.seed.displayPhoneNumber,
        api_key: state.seed.apiKey,
        webhook_url: state.seed.webhook?.url ?? null,
      },
      'sandbox seed number ready',
    );
  }

  handleShutdown(log, [
    ['http', () => sandbox.stop()],
    ['telemetry', () => telemetry.shutdown()],
  ]);
}

// `@switchboard/proto/network`: the network's HTTP clients (messaging, contact check, partner
// hub), on undici. The wire schemas they speak are in the root entry.
export * from './client.ts';
export * from './contacts-check.ts';
export * from './partner-hub.ts';

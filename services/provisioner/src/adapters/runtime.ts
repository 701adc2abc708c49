/**
 * Where instances run. The lifecycle only ever talks to this interface, so the local runtime
 * (child processes) and a Kubernetes runtime (a namespace with its deployments) are
 * interchangeable. Every method is idempotent: calling it again after a crash or a redelivered
 * command finds the work done.
 */
export interface InstanceSpec {
  id: string;
  /** Database name on the shared PostgreSQL server. */
  databaseName: string;
  /** The instance's environment (see domain/instance-env.ts). */
  env: Record<string, string>;
  /** The port it listens on (local runtime). */
  port: number;
  /** A process the runtime started before (recorded), to adopt instead of starting anew. */
  knownPid: number | null;
}

export interface RuntimeStatus {
  state: 'running' | 'stopped';
  pid: number | null;
}

export interface Runtime {
  /** Allocates what the instance keeps: its database and its streams. */
  create(spec: Pick<InstanceSpec, 'id' | 'databaseName'>): Promise<void>;
  /** Runs the instance (adopting one already running) and keeps it running. */
  start(spec: InstanceSpec): Promise<RuntimeStatus>;
  /** Stops every process of the instance; its data stays. */
  scaleToZero(id: string, knownPid: number | null): Promise<void>;
  status(id: string): Promise<RuntimeStatus>;
  /** Stops supervising; with `stopInstances` also stops them. */
  close(opts: { stopInstances: boolean }): Promise<void>;
}

// Processes that meet: the TCP store, the torchrun environment, the launcher. No CUDA in here;
// Communicator.rendezvous / fromEnvironment (src/distributed/communicator.ts) build NCCL ranks on top of it.
export {
  StoreServer,
  TcpStore,
  StoreError,
  StoreTimeoutError,
  openStore,
  parseAddress,
  storeToken,
  STORE_TOKEN_ENV,
  STORE_LISTEN_ENV,
  type OpenStoreOptions,
  type RequestOptions,
  type StoreConnectOptions,
  type StoreLimits,
  type StoreServerOptions,
} from './store';
export { distributedEnvironment, type DistributedEnvironment } from './rendezvous';
export type { LaunchOptions } from './launcher';

// The launcher (cuda-ts-run's code) loads when one of these is called, not when cuda-ts is imported.
import type * as Launcher from './launcher';
const launcher = (): typeof Launcher => require('./launcher') as typeof Launcher;
/**
 * Parses cuda-ts-run's command line (torchrun's spellings --nproc_per_node/--node_rank are accepted).
 * @param argv cuda-ts-run's arguments without node and the launcher's path (process.argv.slice(2)): the options, then the script and its arguments.
 */
export const parseLauncherArgs: typeof Launcher.parseLauncherArgs = (argv) => launcher().parseLauncherArgs(argv);
/**
 * Runs the ranks of this node; resolves with the exit status the launcher should exit with (0 when
 * every rank exited 0, else the first failing rank's code, or 128 + signal number).
 * @param options `nprocPerNode` (processes on this node, one per GPU) and `script` (required), `nnodes` (default 1), `nodeRank` (default 0), `master` (rank
 * 0's store host:port; default on one node: 127.0.0.1 and a port the launcher serves), `runId`, `args`, `killGraceMs` (ms between SIGTERM and SIGKILL;
 * default 5000), `env` (added to process.env), `stdio` (default 'inherit') and `onSpawn`.
 */
export const launchRanks: typeof Launcher.launchRanks = (options) => launcher().launchRanks(options);
